import type { Static, TObject } from '@sinclair/typebox'
import { fieldsOf } from '../schemas/common.js'

/**
 * A field's column: its name in snake_case (`userId` → `user_id`). A resource's fields are declared once, in
 * its TypeBox schema (src/schemas); its table's type (database.ts), the statements' column lists and the
 * reading of a row follow from the schema's properties through this one mapping (docs/style.md#query-style).
 */
export type ColumnOf<Field extends string> = Field extends `${infer Letter}${infer Rest}`
  ? `${Letter extends Lowercase<Letter> ? Letter : `_${Lowercase<Letter>}`}${ColumnOf<Rest>}`
  : Field

export function columnOf<Field extends string> (field: Field): ColumnOf<Field> {
  return field.replace(/[A-Z]/g, letter => `_${letter.toLowerCase()}`) as ColumnOf<Field>
}

/** A record's fields under their columns' names: the columns that store them (src/store/database.ts). */
export type ColumnsOf<T> = { [Field in keyof T & string as ColumnOf<Field>]: T[Field] }

/** The fields of a schema stored as they are, in its order: all but those of `computed`. */
export function storedFields<Schema extends TObject, Computed extends keyof Static<Schema> & string> (
  schema: Schema, computed: readonly Computed[]
): Array<Exclude<keyof Static<Schema> & string, Computed>> {
  return fieldsOf(schema).filter((field): field is Exclude<keyof Static<Schema> & string, Computed> =>
    !(computed as readonly string[]).includes(field))
}

/** The columns of the fields of `values` that are not undefined (a PATCH's: the fields it was given). */
export function columnsOf<T extends object> (values: T): Partial<ColumnsOf<T>> {
  const columns: Record<string, unknown> = {}
  for (const [field, value] of Object.entries(values)) if (value !== undefined) columns[columnOf(field)] = value
  return columns as Partial<ColumnsOf<T>>
}

/**
 * How a resource is read from a row, field by field in the order of its schema: the fields `computed` answers
 * from the row (a sum of cents in reais, assets as JSON), every other from the column of its name. The row's
 * type must hold those columns, of the fields' types; that the database holds them is
 * test/schemas/fields.test.ts's to show. Against an object literal per resource it costs nothing measurable
 * (a list of 50 portfolios on SQLite 43–49 → 46.5–51 µs, a detail 13.9–14.7 → 13.5–15.4 µs, four runs each of
 * bench/portfolio-repository.ts).
 */
export function rowReader<Schema extends TObject, Row, Computed extends Partial<Static<Schema>>> (
  schema: Schema, computed: (row: Row) => Computed
): (row: Row & ColumnsOf<Omit<Static<Schema>, keyof Computed>>) => Static<Schema> {
  const fields = fieldsOf(schema).map(field => [field, columnOf(field)] as const)
  return row => {
    const columns: Record<string, unknown> = row
    const value: Record<string, unknown> = {}
    for (const [field, column] of fields) value[field] = columns[column]
    // Each computed field replaces what its own column's name read, where the schema puts it.
    return Object.assign(value, computed(row)) as Static<Schema>
  }
}
