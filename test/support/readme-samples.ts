import { readFileSync } from "node:fs";
import { join } from "node:path";

/** One fenced code block of README.md: its language, its text, and the `##` section it is under. */
export type Sample = { lang: string; code: string; section: string; line: number };

/**
 * Sections whose samples this test does not run, and why. Everything else in the README runs as
 * pasted: the rule is by `##` heading, so a section added under one of these is skipped with it.
 */
export const SKIPPED_SECTIONS: Record<string, string> = {
  "Going to production": "production samples need PostgreSQL, a mail server and the compiled build (CI's .ci/run starts them)",
  "Custody and the on-chain rail": "on-chain samples need a chain (a devnet or a provider's RPC)",
  Tests: "they run the test suite, this test among it",
};

/** A block that installs: the test runs in an installed tree, and starts the same server itself. */
export const installs = (sample: Sample) => /\bnpm (install|ci)\b/.test(sample.code);

/**
 * A line giving a variable the reader's own value, written as a placeholder ending in "…"
 * (`export API_KEY=fpk_… BASE_URL=…`): the test sets those variables itself and leaves the line out.
 */
const PLACEHOLDER_LINE = /^\s*(export\s+)?[A-Z_]+=\S*…/;

/** The fenced blocks of a markdown text, fences indented or not, with their section. */
export function samplesOf(markdown: string): Sample[] {
  const samples: Sample[] = [];
  let section = "";
  let open: { lang: string; lines: string[]; indent: number; line: number } | undefined;
  markdown.split("\n").forEach((text, i) => {
    const fence = /^(\s*)```(\S*)\s*$/.exec(text);
    if (open) {
      if (fence) {
        samples.push({ lang: open.lang, code: open.lines.join("\n"), section, line: open.line });
        open = undefined;
      } else open.lines.push(text.slice(open.indent));
      return;
    }
    if (fence) open = { lang: fence[2]!, lines: [], indent: fence[1]!.length, line: i + 1 };
    else if (text.startsWith("## ")) section = text.slice(3).trim();
  });
  return samples;
}

/** The README's samples in one language that the test runs, placeholder lines left out. */
export function runnableSamples(lang: string): Sample[] {
  return samplesOf(readFileSync(join(process.cwd(), "README.md"), "utf8"))
    .filter((sample) => sample.lang === lang && !(sample.section in SKIPPED_SECTIONS) && !installs(sample))
    .map((sample) => ({ ...sample, code: sample.code.split("\n").filter((line) => !PLACEHOLDER_LINE.test(line)).join("\n") }));
}
