import { builder } from "../graphql/builder.js";
import { NETWORK_NAMES } from "../providers/chains.js";

export const NetworkEnum = builder.enumType("Network", { description: "The supported EVM chains.", values: NETWORK_NAMES });
