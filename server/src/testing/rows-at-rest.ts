/** Test-only: rows at rest in the test app's telemetry store, whichever engine it is. */
import type { TestApp } from './app.js';
import { chOf } from './clickhouse.js';

/**
 * Rows of a telemetry table, JSON-friendly (64-bit integers as strings), from the test app's engine. The SQL
 * is plain enough for both dialects; `$name` parameters (strings) become ClickHouse's `{name:String}`.
 */
export async function rows(t: TestApp, sql: string, params: Record<string, string> = {}): Promise<Record<string, unknown>[]> {
  const ch = chOf(t.ctx.telemetry);
  if (ch) {
    const chSql = sql
      .replace(/\$([A-Za-z_]\w*)/g, '{$1:String}')
      .replace(/\bEXCLUDE \(/g, 'EXCEPT (')
      // Rows a table adds up or replaces are read as they are once merged.
      .replace(/\bFROM (agent_sightings|agent_sighting_environments|trace_tombstones|metric_tombstones|metric_series|metric_metadata|trace_summaries|run_summaries)\b(?! FINAL)/g, 'FROM $1 FINAL');
    const out = await ch.client.query(chSql, params);
    // ClickHouse has no NULL array: a plain span event's context_source_ids is stored [] (its context_kind says it has none).
    for (const r of out) if (Array.isArray(r.context_source_ids) && r.context_kind === null && r.context_source_ids.length === 0) r.context_source_ids = null;
    return out;
  }
  return t.duck.read(async (c) => (await c.runAndReadAll(sql, params)).getRowObjectsJson() as Record<string, unknown>[]);
}
