import { openDatabase } from "/work/main/src/db/database.ts";
import { createLogger } from "/work/main/src/logger.ts";
const db = await openDatabase({ logger: createLogger("info") });
console.log(await db.prisma.client.count());
const c = await db.prisma.client.create({ data: { email: "a@b.c" } });
console.log(c);
await db.close();
