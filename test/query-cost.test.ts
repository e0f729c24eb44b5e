import { buildSchema, parse } from "graphql";
import { describe, expect, it } from "vitest";
import { schema } from "../src/gateway/schema.js";
import { MAX_LISTED_KEYS } from "../src/keys/service.js";
import { MAX_COST, operationCost, unboundedLists } from "../src/pipeline/query-limits.js";

const costOf = (query: string, on = schema) => operationCost({ schema: on, document: parse(query) });

/** A schema with sizes and pages under names the rule has never heard of. */
const TOY = buildSchema(`
  type Query { things(count: Int, page: Int): [Thing!]!, shelf(take: Int = 50, offset: Int): Shelf! }
  type Shelf { items: [Thing!]! }
  type Thing { id: ID!, parts: [Thing!]! }
`);

describe("the query cost rule", () => {
  it("counts a page object's size for the list inside it", () => {
    expect(costOf("{ transactionsPage(limit: 1000) { transactions { id } } }")).toBe(1001);
    const aliases = Array.from({ length: 20 }, (_, i) => `a${i}: transactionsPage(limit: 1000) { transactions { id } }`).join(" ");
    expect(costOf(`{ ${aliases} }`)).toBeGreaterThan(MAX_COST);
  });

  it("counts any Int argument of a list or page as its size, whatever its name, but not its position", () => {
    expect(costOf("{ things(count: 300, page: 9999) { id } }", TOY)).toBe(300);
    expect(costOf("{ shelf(take: 40, offset: 100000) { items { id } } }", TOY)).toBe(41);
    expect(costOf("{ shelf { items { id } } }", TOY)).toBe(51);
  });

  it("counts a list without a size argument at its declared bound", () => {
    expect(costOf("{ apiKeys { id } }")).toBe(MAX_LISTED_KEYS);
  });

  it("costs one document again for each request whose variables size its lists, and once when none do", () => {
    const sized = parse("query ($n: Int) { things(count: $n) { id } }");
    expect(operationCost({ schema: TOY, document: sized, variableValues: { n: 10 } })).toBe(10);
    expect(operationCost({ schema: TOY, document: sized, variableValues: { n: 3000 } })).toBe(3000);
    const unsized = parse("{ shelf { items { id } } }");
    expect(operationCost({ schema: TOY, document: unsized })).toBe(51);
    expect(operationCost({ schema: TOY, document: unsized, variableValues: { n: 3000 } })).toBe(51);
  });

  it("finds every list of objects without a bound, and the schema has none", () => {
    expect(unboundedLists(TOY)).toEqual(["Thing.parts"]);
    expect(unboundedLists(schema)).toEqual([]);
  });
});
