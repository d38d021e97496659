// Whether a value is UUID-shaped: any version and variant nibble, as the API accepts ids (LangGraph's own
// checkpoint ids are uuid6).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (v: unknown): v is string => typeof v === "string" && UUID.test(v);
