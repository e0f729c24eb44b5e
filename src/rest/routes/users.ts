import { z } from "zod";
import { graphql } from "../../graphql/typed.js";
import { UserFields } from "../../users/representation.js";
import { CreateUser, UpdateUser } from "../../users/service.js";
import { METADATA_DESCRIPTION } from "../../metadata.js";
import { doc, named } from "../docs.js";
import { examples } from "../examples.js";
import { bracketed, integer, route } from "../route.js";

const User = named("User", z.object({
  id: doc.id,
  createdAt: doc.timestamp,
  updatedAt: doc.timestamp,
  firstName: z.string(),
  lastName: z.string(),
  phoneNumber: z.string().describe("E.164"),
  email: z.string(),
  clientId: doc.id,
  externalId: z.string().nullable().describe("your own id for the user, unique among your users"),
  metadata: doc.metadata.describe(METADATA_DESCRIPTION),
  livemode: doc.livemode,
}));

export const userRoutes = [
  route({
    method: "POST",
    path: "/v1/user",
    operation: graphql(`mutation CreateUser($input: CreateUserInput!) { createUser(input: $input) { ...UserFields } }`, [UserFields]),
    variables: ({ body }) => ({
      input: {
        email: body.email,
        firstName: body.firstName,
        lastName: body.lastName,
        phoneNumber: body.phoneNumber,
        dob: body.dob,
        externalId: body.externalId,
        metadata: body.metadata,
      },
    }),
    result: (data) => data.createUser,
    status: 201,
    docs: {
      summary: "Register an end user",
      description:
        "A second user with the same e-mail under the client is a 400; one with the same `externalId` is a 409 whose `details.id` names the existing user. `dob` (YYYY-MM-DD) is kept, not returned.",
      body: named("CreateUserRequest", CreateUser),
      response: User,
      errors: ["CONFLICT"],
      example: { body: examples.newUser, response: examples.user },
    },
  }),
  route({
    method: "GET",
    path: "/v1/user",
    operation: graphql(
      `query ListUsers($page: Int, $limit: Int, $externalId: String, $metadata: JSON) { users(page: $page, limit: $limit, externalId: $externalId, metadata: $metadata) { ...UserFields } }`,
      [UserFields],
    ),
    variables: ({ query }) => ({ page: integer(query.page), limit: integer(query.limit), externalId: query.externalId, metadata: bracketed(query, "metadata") }),
    result: (data) => data.users,
    docs: {
      summary: "List the client's users (default 10 per page), optionally filtered",
      description:
        "`externalId=` finds the user with that id; `metadata[key]=value` keeps users whose metadata holds the pair (several combine with AND). Both are served by indexes. Any other form of `metadata` is a 400.",
      query: doc.pageQuery.extend({
        externalId: z.string().min(1).max(180).optional().describe("your own id for the user"),
        metadata: z
          .record(z.string().min(1).max(40), z.string().min(1).max(500))
          .optional()
          .describe("metadata pairs the user must hold, each as metadata[key]=value (e.g. metadata[segment]=gold); several combine with AND"),
      }),
      response: z.array(User),
      example: { response: [examples.user] },
    },
  }),
  route({
    method: "GET",
    path: "/v1/user/:userId",
    operation: graphql(`query GetUser($id: ID!) { user(id: $id) { ...UserFields } }`, [UserFields]),
    variables: ({ params }) => ({ id: params.userId }),
    result: (data) => data.user,
    docs: { summary: "Get a user", params: doc.userParam, response: User, errors: ["NOT_FOUND"], example: { response: examples.user } },
  }),
  route({
    method: "PATCH",
    path: "/v1/user/:userId",
    operation: graphql(`mutation UpdateUser($id: ID!, $input: UpdateUserInput!) { updateUser(id: $id, input: $input) { ...UserFields } }`, [UserFields]),
    variables: ({ params, body }) => ({ id: params.userId, input: { externalId: body.externalId, metadata: body.metadata } }),
    result: (data) => data.updateUser,
    docs: {
      summary: "Update a user's metadata and externalId",
      description:
        "`metadata` is merged into the user's: a key with a string value is set, a key set to `\"\"` or null is removed, other keys stay (at most 50 keys once merged). `externalId` sets your id for the user (null removes it); another user's is a 409 naming that user.",
      params: doc.userParam,
      body: named("UpdateUserRequest", UpdateUser),
      response: User,
      errors: ["NOT_FOUND", "CONFLICT"],
      example: {
        body: { metadata: { segment: "platinum", referrer: "" } },
        response: { ...examples.user, metadata: { segment: "platinum" }, updatedAt: examples.later },
      },
    },
  }),
];
