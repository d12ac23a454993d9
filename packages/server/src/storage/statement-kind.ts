// The statements' texts are constants (a few dozen), so which are SELECTs is worked out
// once each; the bound only matters if a text ever is not a constant.
const MAX_KNOWN = 256;
const selects = new Map<string, boolean>();

/**
 * Whether `sql` is a plain query. Anything else may write: it empties the remembered
 * reads, and outside a transaction it is a commit to sync.
 */
export function isSelect(sql: string): boolean {
  let select = selects.get(sql);
  if (select === undefined) {
    select = /^\s*SELECT\s/i.test(sql);
    if (selects.size < MAX_KNOWN) selects.set(sql, select);
  }
  return select;
}
