import { integer, type Route } from "../route.js";

const EVENT = "id type createdAt data";

export const eventRoutes: Route[] = [
  {
    method: "GET",
    path: "/v1/events",
    operation: `query ($after: ID, $first: Int, $types: [String!]) {
      events(after: $after, first: $first, types: $types) { edges { node { ${EVENT} } } pageInfo { hasNextPage } }
    }`,
    variables: ({ query }) => ({ after: query.after, first: integer(query.limit), types: query.type === undefined ? undefined : [query.type].flat() }),
    result: ({ events }) => ({ data: events.edges.map((edge: { node: unknown }) => edge.node), hasMore: events.pageInfo.hasNextPage }),
  },
  {
    method: "GET",
    path: "/v1/events/:id",
    operation: `query ($id: ID!) { event(id: $id) { ${EVENT} } }`,
    variables: ({ params }) => ({ id: params.id }),
    result: (data) => data.event,
  },
];
