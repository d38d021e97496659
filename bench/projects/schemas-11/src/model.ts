// Benchmark project (bench/schemas.ts): the fake chat model every graph of it uses (no network, no key).
import { FakeListChatModel } from "@langchain/core/utils/testing";

export const model = new FakeListChatModel({ responses: ["Noted.", "Done.", "Here is what I found."] });
