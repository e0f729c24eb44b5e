import { lexicographicSortSchema, printSchema } from "graphql";
import { schema } from "./schema.js";

/** The schema as SDL, sorted: the text of schema.graphql. */
export const printedSchema = () => `${printSchema(lexicographicSortSchema(schema))}\n`;
