/** The two databases a store's statements are written for. */
export type Dialect = "sqlite" | "postgres";

/**
 * A value bound to a statement. Booleans are bound as 1 and 0 in SQLite (which has no
 * boolean type), and a list of texts only through {@link sqlIn}.
 */
export type SqlArg = string | number | bigint | boolean | Uint8Array | null;

/**
 * A statement written once for both databases with the {@link sql} tag: its values are
 * always bound as parameters, never spliced into the text, and it renders as SQLite's
 * `?` or PostgreSQL's `$1` placeholders.
 */
export class Sql {
  // Text around the values: a call site's template (for `sql`), or built here.
  readonly #strings: readonly string[];
  // Bound values and nested statements, between the strings.
  readonly #values: readonly (SqlArg | Sql)[];
  // Text that differs between the dialects (`sqlFor`): then strings and values are empty.
  readonly #forms: Readonly<Record<Dialect, Sql>> | undefined;
  // Whether it binds no value at all (a column list, a dialect's keyword).
  readonly #fixed: boolean;
  // Whether every nested statement is fixed: its text is then the same at every call of
  // its template, and is rendered once per dialect.
  readonly #cacheable: boolean;

  /** @internal Built by {@link sql}, {@link rawSql}, {@link sqlFor} and {@link joinSql}. */
  constructor(strings: readonly string[], values: readonly (SqlArg | Sql)[], forms?: Readonly<Record<Dialect, Sql>>) {
    this.#strings = strings;
    this.#values = values;
    this.#forms = forms;
    this.#cacheable = values.every((value) => !(value instanceof Sql) || value.#fixed);
    this.#fixed = forms === undefined ? this.#cacheable && values.every((value) => value instanceof Sql) : forms.sqlite.#fixed && forms.postgres.#fixed;
  }

  /** The statement's text and parameters for `dialect`. */
  render(dialect: Dialect): { text: string; params: SqlArg[] } {
    const params: SqlArg[] = [];
    if (this.#cacheable && this.#forms === undefined && isTemplate(this.#strings)) {
      for (const value of this.#values) if (!(value instanceof Sql)) params.push(bound(dialect, value));
      return { text: this.#cachedText(this.#strings, dialect), params };
    }
    return { text: this.#write(dialect, params), params };
  }

  #cachedText(template: TemplateStringsArray, dialect: Dialect): string {
    // Slot by slot: the fixed statement nested there, or undefined for a bound value.
    const nested = this.#values.map((value) => (value instanceof Sql ? value : undefined));
    const cached = texts[dialect].get(template);
    // The same fixed statements in the same slots as when it was rendered (module constants, as a rule).
    if (cached !== undefined && cached.nested.length === nested.length && cached.nested.every((each, i) => each === nested[i])) return cached.text;
    const text = this.#write(dialect, []);
    texts[dialect].set(template, { nested, text });
    return text;
  }

  #write(dialect: Dialect, params: SqlArg[]): string {
    if (this.#forms !== undefined) return this.#forms[dialect].#write(dialect, params);
    let text = this.#strings[0] as string;
    this.#values.forEach((value, i) => {
      if (value instanceof Sql) text += value.#write(dialect, params);
      else {
        params.push(bound(dialect, value));
        text += dialect === "sqlite" ? "?" : `$${params.length}`;
      }
      text += this.#strings[i + 1];
    });
    return text;
  }
}

function isTemplate(strings: readonly string[]): strings is TemplateStringsArray {
  return "raw" in strings;
}

function bound(dialect: Dialect, value: SqlArg): SqlArg {
  return dialect === "sqlite" && typeof value === "boolean" ? Number(value) : value;
}

// Rendered texts by call site (a template is the same object at every call of its site).
const texts: Record<Dialect, WeakMap<TemplateStringsArray, { nested: readonly (Sql | undefined)[]; text: string }>> = {
  sqlite: new WeakMap(),
  postgres: new WeakMap(),
};

/**
 * A statement: `` sql`SELECT ... WHERE id = ${id}` ``. Each interpolated value is a bound
 * parameter; an interpolated {@link Sql} is nested as it is.
 */
export function sql(strings: TemplateStringsArray, ...values: (SqlArg | Sql)[]): Sql {
  return new Sql(strings, values);
}

/** Text written by this server (a column list, a table's name); never anything a client sent. */
export function rawSql(text: string): Sql {
  return new Sql([text], []);
}

/** Text that differs between the databases: each dialect's own form of the same step. */
export function sqlFor(forms: Readonly<Record<Dialect, Sql>>): Sql {
  return new Sql([], [], forms);
}

/** `parts` joined by `separator` (written by this server). */
export function joinSql(parts: readonly Sql[], separator: string): Sql {
  // A copy: the caller's array changed later must not change a statement already built.
  return new Sql(parts.length === 0 ? [""] : ["", ...parts.slice(1).map(() => separator), ""], [...parts]);
}

/** `column IN (...)` over `values` (which must not be empty): one parameter per value in SQLite, one array in PostgreSQL. */
export function sqlIn(column: Sql, values: readonly string[]): Sql {
  return sqlFor({
    sqlite: new Sql(["", " IN (", ...values.slice(1).map(() => ", "), ")"], [column, ...values]),
    postgres: new Sql(["", " = ANY(", "::text[])"], [column, values as unknown as SqlArg]),
  });
}

/**
 * Whether `column` contains `text`, ASCII letters in either case, matched as written
 * (`%` and `_` too, unlike LIKE), alike on both databases: PostgreSQL's `lower()` would
 * otherwise fold by the database's locale (the Kelvin sign as a `k`), SQLite's folds ASCII only.
 */
export function sqlContains(column: Sql, text: string): Sql {
  return sqlFor({
    sqlite: sql`instr(lower(${column}), lower(${text})) > 0`,
    postgres: sql`strpos(lower(${column} COLLATE "C"), lower(${text} COLLATE "C")) > 0`,
  });
}
