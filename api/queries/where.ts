/** A WHERE clause built from optional filters: `anyOf` adds `column IN (...)` for a list, nothing for null. */
export function whereBuilder(first: string, firstArg: unknown) {
  const where = [first];
  const args: unknown[] = [firstArg];
  const anyOf = (column: string, values: readonly string[] | null) => {
    if (!values) return;
    where.push(`${column} IN (${values.map(() => '?').join(', ')})`);
    args.push(...values);
  };
  return { where, args, anyOf };
}
