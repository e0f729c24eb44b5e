import { z } from "zod";
import type { RestInput, Route } from "./route.js";

type Place = "query" | "body";
type Fields = Record<Place, ReadonlySet<string>> & { queryObjects: ReadonlySet<string> };

/**
 * The query parameters and body fields a route takes are the ones its entry documents (`docs.query`,
 * `docs.body`), which are also what the OpenAPI document shows; an object-valued query parameter
 * (the `metadata` filters) is sent as `name[key]=value`. Anything else at the top of a request is
 * refused, named as sent (`Received unknown parameter: nope`), so a misspelt optional field is never
 * silently lost. Below the top, a value passed on as written is checked by its GraphQL input type,
 * and free-form objects (`metadata`) take any key.
 *
 * The table cannot drift from this: at boot, a route whose `variables` read a field it does not
 * document, or never read one it documents, is refused (`checkReads`).
 */
export function unknownFieldOf(route: Route): (input: RestInput) => string | undefined {
  const fields = documentedFields(route);
  checkReads(route, fields);
  const { query, body, queryObjects } = fields;
  const inQuery = (name: string) => query.has(name) || [...queryObjects].some((object) => name.startsWith(`${object}[`));
  return (input) => Object.keys(input.query).find((name) => !inQuery(name)) ?? Object.keys(input.body).find((name) => !body.has(name));
}

function documentedFields(route: Route): Fields {
  const shape: Record<string, z.ZodType> = route.docs.query?.shape ?? {};
  const isObject = (schema: z.ZodType) => z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }).type === "object";
  return {
    query: new Set(Object.keys(shape)),
    queryObjects: new Set(Object.keys(shape).filter((name) => isObject(shape[name]))),
    body: new Set(Object.keys(route.docs.body?.shape ?? {})),
  };
}

/**
 * Runs the route's `variables` on a request that records what they read, and throws unless that is
 * what the route documents: a field read but undocumented would be refused, one documented but never
 * read silently lost. Listing the query's names (`bracketed`) reads its object parameters.
 */
function checkReads(route: Route, documented: Fields) {
  const read: Record<Place, Set<string>> = { query: new Set(), body: new Set() };
  let listsQuery = false;
  const recorder = (place: Place) =>
    new Proxy({} as Record<string, unknown>, {
      get: (_target, name) => void (typeof name === "string" && read[place].add(name)),
      ownKeys: () => ((listsQuery ||= place === "query"), []),
    });
  const params = Object.fromEntries([...route.path.matchAll(/:(\w+)/g)].map(([, name]) => [name, name]));
  route.variables?.({ params, query: recorder("query"), body: recorder("body") });
  const gathered = (place: Place, name: string) => place === "query" && listsQuery && documented.queryObjects.has(name);
  const problems = (["query", "body"] as const).flatMap((place) => [
    ...[...read[place]].filter((name) => !documented[place].has(name)).map((name) => `reads the undocumented ${place} field ${name}`),
    ...[...documented[place]].filter((name) => !read[place].has(name) && !gathered(place, name)).map((name) => `never reads its documented ${place} field ${name}`),
  ]);
  if (problems.length) throw new Error(`REST route ${route.method} ${route.path} ${problems.join("; ")}`);
}
