// Protocol v2's event channels, as the official SDK's ThreadStream subscribes to them (`input` aside: its
// `input.requested` events are subscribed to as the channel `input`).
export const PROTOCOL_CHANNELS = [
  "lifecycle",
  "values",
  "updates",
  "messages",
  "tools",
  "tasks",
  "checkpoints",
  "custom",
] as const;
