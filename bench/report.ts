import { cpus, totalmem } from "node:os";

/** The machine the figures were taken on, for each table's heading. */
export const machine = () => `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;

export function markdownTable(head: string[], rows: (string | number)[][]): string {
  return [head, head.map(() => "---"), ...rows].map((cells) => `| ${cells.join(" | ")} |`).join("\n");
}

/** A section of the printed report: a heading line with the settings, then the table. */
export const section = (heading: string, table: string, footer = "") => `\n${heading}, ${machine()}\n\n${table}\n${footer ? `\n${footer}\n` : ""}`;

/** Nearest-rank percentile. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export const ms = (value: number) => value.toFixed(1);
export const ratio = (value: number, baseline: number) => (value / baseline).toFixed(2);
