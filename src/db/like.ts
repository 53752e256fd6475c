/** A LIKE pattern's literal text: `%`, `_` and the escape character `\` (Postgres' default) escaped. */
export const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);
