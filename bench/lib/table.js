// Renders result rows as a fixed-width text table.

const COLUMNS = [
  ['metric', 'metric'],
  ['value', 'value'],
  ['target', 'target'],
  ['status', 'pass/fail'],
  ['vsHttp', 'x HTTP RTT'],
  ['vsSqlite', 'x SQLite commit'],
];

export function renderTable(rows) {
  const cells = rows.map((row) =>
    COLUMNS.map(([key]) => (row[key] === undefined || row[key] === null ? '' : String(row[key]))),
  );
  const widths = COLUMNS.map(([, title], i) => Math.max(title.length, ...cells.map((c) => c[i].length)));
  const line = (values) =>
    values
      .map((v, i) => v.padEnd(widths[i]))
      .join(' | ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('-+-');
  const out = [line(COLUMNS.map(([, title]) => title)), rule];
  for (const [i, row] of rows.entries()) {
    if (row.section) out.push(`-- ${row.section} --`);
    else out.push(line(cells[i]));
  }
  return out.join('\n');
}
