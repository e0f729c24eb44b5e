import { z } from "zod";
import { graphql } from "../../graphql/typed.js";
import { UserFields } from "../../users/representation.js";
import { CreateUser } from "../../users/service.js";
import { doc, named } from "../docs.js";
import { examples } from "../examples.js";
import { integer, route } from "../route.js";

const User = named("User", z.object({
  id: doc.id,
  createdAt: doc.timestamp,
  updatedAt: doc.timestamp,
  firstName: z.string(),
  lastName: z.string(),
  phoneNumber: z.string().describe("E.164"),
  email: z.string(),
  clientId: doc.id,
}));

export const userRoutes = [
  route({
    method: "POST",
    path: "/v1/user",
    operation: graphql(`mutation ($input: CreateUserInput!) { createUser(input: $input) { ...UserFields } }`, [UserFields]),
    variables: ({ body }) => ({
      input: { email: body.email, firstName: body.firstName, lastName: body.lastName, phoneNumber: body.phoneNumber, dob: body.dob },
    }),
    result: (data) => data.createUser,
    status: 201,
    docs: {
      summary: "Register an end user",
      description: "A second user with the same e-mail under the client is a 400. `dob` (YYYY-MM-DD) is kept, not returned.",
      body: named("CreateUserRequest", CreateUser),
      response: User,
      example: { body: examples.newUser, response: examples.user },
    },
  }),
  route({
    method: "GET",
    path: "/v1/user",
    operation: graphql(`query ($page: Int, $limit: Int) { users(page: $page, limit: $limit) { ...UserFields } }`, [UserFields]),
    variables: ({ query }) => ({ page: integer(query.page), limit: integer(query.limit) }),
    result: (data) => data.users,
    docs: { summary: "List the client's users (default 10 per page)", query: doc.pageQuery, response: z.array(User), example: { response: [examples.user] } },
  }),
  route({
    method: "GET",
    path: "/v1/user/:userId",
    operation: graphql(`query ($id: ID!) { user(id: $id) { ...UserFields } }`, [UserFields]),
    variables: ({ params }) => ({ id: params.userId }),
    result: (data) => data.user,
    docs: { summary: "Get a user", params: doc.userParam, response: User, errors: ["NOT_FOUND"], example: { response: examples.user } },
  }),
];
