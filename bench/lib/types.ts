// What every benchmark part returns: figures for the JSON file, rows for the Markdown table,
// and the goals it checked (met or missed), so the run can name every goal missed.

export interface Goal {
  name: string;
  target: string;
  actual: string;
  met: boolean;
}

export interface PartResult {
  /** Key of the part (latency, throughput, ...). */
  part: string;
  title: string;
  /** Machine-readable figures. */
  figures: Record<string, unknown>;
  /** Markdown table: header plus rows. */
  table: { header: string[]; rows: string[][] };
  goals: Goal[];
  notes: string[];
  seconds: number;
}

export interface RunOptions {
  quick: boolean;
  soakMinutes: number;
  /** Log a progress line. */
  log: (line: string) => void;
}

export function goal(name: string, target: string, actual: string, met: boolean): Goal {
  return { name, target, actual, met };
}

export function fmt(x: number, digits = 1): string {
  if (!Number.isFinite(x)) return 'n/a';
  return x.toFixed(digits);
}

/** What a part could not do, for its notes: the error's first line (a failed start appends Homebridge's log). */
export function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
