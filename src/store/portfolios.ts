import { randomUUID } from 'node:crypto'
import { sql, type Selectable, type Transaction } from 'kysely'
import type { StoreEngine } from './connect.js'
import type { Database, PortfoliosTable } from './database.js'
import { GroupCommit } from './group-commit.js'
import { now, type Announce, type StoreHandle } from './handle.js'
import { fieldsOf, type Page } from '../schemas/common.js'
import { fromCents } from '../schemas/money.js'
import type { Asset } from '../schemas/asset.js'
import { ASSET_COLUMNS, toAsset, type AssetRow } from './rows.js'
import { columnOf, columnsOf, rowReader, storedFields } from './columns.js'
import type { Versioned } from '../http/entity-tag.js'
import {
  CreatePortfolioInputSchema,
  PortfolioSchema,
  type CreatePortfolioInput,
  type Portfolio,
  type UpdatePortfolioInput
} from '../schemas/portfolio.js'

/** A portfolio's total, the sum of its assets' values computed by the database (docs/api.md#money). */
const TOTAL_SQL =
  'coalesce((select sum(pa.value_cents) from portfolio_assets pa where pa.portfolio_id = portfolios.id), 0)'

type PortfolioRow = Selectable<PortfoliosTable> & { total_value: number | string }

interface WithAssetsRow extends PortfolioRow {
  /** JSON text on SQLite, parsed by the driver on PostgreSQL. */
  assets: string | AssetRow[]
}

/**
 * A portfolio, its total and its whole assets in one statement (one round trip, one snapshot on
 * both engines, so the total always matches the assets listed), the assets aggregated as JSON
 * objects of their rows (each column under its name). Correlated subqueries read the assets in the order of their
 * index (portfolio_id, created_at, id): SQLite sorts nothing, where an `order by` inside the aggregate
 * made it build a temporary B-tree on every read (8 µs against 29 µs for ten assets).
 * @internal Test seam: a test reads its query plan on SQLite.
 */
export function withAssetsSql (engine: StoreEngine): string {
  const pairs = ASSET_COLUMNS.map(column => `'${column}', a.${column}`).join(', ')
  const assets = engine === 'postgres'
    ? `coalesce(json_agg(json_build_object(${pairs}) order by a.created_at, a.id), '[]'::json)`
    : `coalesce(json_group_array(json_object(${pairs})), '[]')`
  return `select p.*, ${TOTAL_SQL.replaceAll('portfolios.id', 'p.id')} as total_value,
      (select ${assets}
        from (select * from portfolio_assets where portfolio_id = p.id order by created_at, id) a) as assets
    from portfolios p where p.id = ?`
}

/** The owners of a list of portfolios, the list bound as one parameter (as `among` in rows.ts binds it). */
function ownersSql (engine: StoreEngine): string {
  const among = engine === 'postgres' ? 'id = any(?::text[])' : 'id in (select value from json_each(?))'
  return `select id, user_id from portfolios where ${among}`
}

const WITH_TOTAL_SQL = `select portfolios.*, ${TOTAL_SQL} as total_value from portfolios`
const BY_ID_SQL = `${WITH_TOTAL_SQL} where id = ?`
const PAGE_SQL = 'order by created_at, id limit ? offset ?'
const LIST_SQL = `${WITH_TOTAL_SQL} ${PAGE_SQL}`
const LIST_OF_USER_SQL = `${WITH_TOTAL_SQL} where user_id = ? ${PAGE_SQL}`

/** A portfolio's fields the table stores, in the order of the insert's columns. */
const STORED_FIELDS = storedFields(PortfolioSchema, ['totalValue'])
const INSERT_SQL = `insert into portfolios (${STORED_FIELDS.map(columnOf).join(', ')}) ` +
  `values (${STORED_FIELDS.map(() => '?').join(', ')})`

/**
 * A create's input as a portfolio holds it: each field of its schema, one it left out null — so that a field added
 * to the schemas needs no line here. A create's CPU on SQLite: 54.7–58.2 µs/call with the fields written out,
 * 54.9–58.9 so (bench/portfolio-repository.ts, two alternated pairs).
 */
type StoredInput = {
  [Field in keyof CreatePortfolioInput]-?: undefined extends CreatePortfolioInput[Field]
    ? Exclude<CreatePortfolioInput[Field], undefined> | null
    : CreatePortfolioInput[Field]
}
const CREATE_FIELDS = fieldsOf(CreatePortfolioInputSchema)

function storedInput (input: CreatePortfolioInput): StoredInput {
  const stored: Record<string, unknown> = {}
  for (const field of CREATE_FIELDS) stored[field] = input[field] ?? null
  return stored as StoredInput
}

const TOUCH_SQL = 'update portfolios set updated_at = ?, version = version + 1 where id = ? returning user_id'

/** The assets' ids of a portfolio, for the statements on their transactions. */
const ASSET_IDS_SQL = 'select id from portfolio_assets where portfolio_id = ?'

/** What a write decides on: the owner and the version (see `PortfolioRows`). */
const LOCKED_SQL = 'select user_id, version from portfolios where id = ?'

/** PostgreSQL's row locks of a write (see `PortfolioRows`), in the order every write takes them (SQLite has none). */
const LOCK_SQL = {
  transactions: `select id from asset_transactions where asset_id in (${ASSET_IDS_SQL}) for update`,
  assets: `${ASSET_IDS_SQL} for update`,
  portfolio: `${LOCKED_SQL} for update`
}

const DELETE_SQL = {
  transactions: `delete from asset_transactions where asset_id in (${ASSET_IDS_SQL})`,
  assets: 'delete from portfolio_assets where portfolio_id = ?',
  portfolio: 'delete from portfolios where id = ?'
}

function assetRowsOf (row: WithAssetsRow): AssetRow[] {
  return typeof row.assets === 'string' ? JSON.parse(row.assets) as AssetRow[] : row.assets
}

/** A portfolio from a row with its total: its assets' cents summed by the database, in reais. */
const toPortfolio = rowReader(PortfolioSchema, (row: Pick<PortfolioRow, 'total_value'>) => ({
  totalValue: fromCents(row.total_value)
}))

/** A portfolio's row as a write decides on it. */
interface Locked {
  user_id: string
  version: number
}

type Statements = ReturnType<typeof statements>

/** Every statement of the repository, compiled once for the store's engine. */
function statements (handle: StoreHandle) {
  return {
    byId: handle.statement<PortfolioRow>(BY_ID_SQL),
    withAssets: handle.statement<WithAssetsRow>(withAssetsSql(handle.engine)),
    owners: handle.statement<{ id: string, user_id: string }>(ownersSql(handle.engine)),
    locked: handle.statement<Locked>(LOCKED_SQL),
    touch: handle.statement<{ user_id: string }>(TOUCH_SQL),
    list: handle.statement<PortfolioRow>(LIST_SQL),
    listOfUser: handle.statement<PortfolioRow>(LIST_OF_USER_SQL),
    insert: handle.statement(INSERT_SQL),
    lock: {
      transactions: handle.statement(LOCK_SQL.transactions),
      assets: handle.statement(LOCK_SQL.assets),
      portfolio: handle.statement<Locked>(LOCK_SQL.portfolio)
    },
    delete: {
      transactions: handle.changes(DELETE_SQL.transactions),
      assets: handle.changes(DELETE_SQL.assets),
      portfolio: handle.changes(DELETE_SQL.portfolio)
    }
  }
}

/**
 * Portfolios (docs/api.md#resources), their totals summed by the database. Inputs arrive validated and trimmed.
 * Every query is a statement compiled once (docs/style.md#query-style): the detail read and the create are the
 * busiest routes, and every asset write touches the portfolio. The change is built, its `set` from the fields it
 * was given; columns and rows follow from the schemas (columns.ts).
 */
export class PortfolioRepository {
  private readonly run: Statements
  /** Creates of one event-loop turn, committed together on SQLite. */
  private readonly creates: GroupCommit

  constructor (private readonly handle: StoreHandle) {
    this.run = statements(handle)
    this.creates = new GroupCommit(handle)
  }

  async list (filter: { userId?: string }, page: Page): Promise<Portfolio[]> {
    const rows = filter.userId === undefined
      ? await this.run.list([page.limit, page.offset])
      : await this.run.listOfUser([filter.userId, page.limit, page.offset])
    return rows.map(toPortfolio)
  }

  /** The portfolio alone: its total, not its assets. */
  async portfolioOnly (id: string): Promise<Portfolio | undefined> {
    const row = (await this.run.byId([id]))[0]
    return row === undefined ? undefined : toPortfolio(row)
  }

  /**
   * The portfolio and its whole assets, oldest first, and the version its row has, in one statement (one
   * snapshot: the total is theirs).
   */
  async portfolioAndAssets (
    id: string
  ): Promise<{ portfolio: Portfolio, assets: Asset[], version: number } | undefined> {
    const row = (await this.run.withAssets([id]))[0]
    return row === undefined
      ? undefined
      : { portfolio: toPortfolio(row), assets: assetRowsOf(row).map(toAsset), version: row.version }
  }

  /** The `userId` of each portfolio of `ids` that exists, in one statement. */
  async ownersOf (ids: readonly string[]): Promise<Map<string, string>> {
    const rows = await this.run.owners([this.handle.listParameter(ids)])
    return new Map(rows.map(row => [row.id, row.user_id]))
  }

  /** Stores a new portfolio and answers it from what was written (a new portfolio's total is 0). */
  async create (input: CreatePortfolioInput): Promise<Portfolio> {
    const timestamp = now()
    const portfolio: Portfolio = {
      id: randomUUID(),
      ...storedInput(input),
      totalValue: 0,
      createdAt: timestamp,
      updatedAt: timestamp
    }
    await this.creates.run(this.run.insert, STORED_FIELDS.map(field => portfolio[field]))
    return portfolio
  }

  /** The portfolios' rows of the write `trx`, whose rows are stamped `now` and whose changes `announce` tells. */
  rowsIn (trx: Transaction<Database>, now: string, announce: Announce): PortfolioRows {
    return new PortfolioRows(this.run, this.handle.engine, trx, now, announce)
  }
}

/**
 * Portfolios' rows inside a write of the domain (the `portfolios` of its unit of work: src/domain/ports.ts): what
 * they read and write, and no rule; each change of a portfolio is announced (told once the write commits). A read
 * for a write locks the portfolio's row on PostgreSQL (SQLite's one connection runs one transaction at a time):
 * asset writes touch the same row, so nothing changes it between the read and the write. A delete first locks what
 * it deletes, in the order every delete takes (transactions, assets, then the portfolio, which asset writes touch
 * last): locking the portfolio first could deadlock against an asset's write.
 */
export class PortfolioRows {
  constructor (
    private readonly run: Statements,
    private readonly engine: StoreEngine,
    private readonly trx: Transaction<Database>,
    private readonly now: string,
    private readonly announce: Announce
  ) {}

  /** The portfolio's owner and version; undefined when there is no such portfolio. */
  async lockForWrite (id: string): Promise<{ userId: string, version: number } | undefined> {
    const row = (await (this.engine === 'postgres' ? this.run.lock.portfolio : this.run.locked)([id], this.trx))[0]
    return row === undefined ? undefined : { userId: row.user_id, version: row.version }
  }

  /** As {@link lockForWrite}, for the portfolio's delete: its assets' transactions and its assets locked first. */
  async lockForDelete (id: string): Promise<{ userId: string, version: number } | undefined> {
    if (this.engine === 'postgres') {
      await this.run.lock.transactions([id], this.trx)
      await this.run.lock.assets([id], this.trx)
    }
    return await this.lockForWrite(id)
  }

  /** Sets `updated_at` and bumps the version (locking the row on PostgreSQL): the owner, or undefined for none. */
  async touch (id: string): Promise<string | undefined> {
    const row = (await this.run.touch([this.now, id], this.trx))[0]
    if (row !== undefined) this.announce.portfolio(id)
    return row?.user_id
  }

  /**
   * Renames or describes the portfolio; answers it after the change, read in the same transaction. Its `set` is
   * built from the fields given (a statement per combination was 2ⁿ texts no type checked). The cost, measured
   * with `bench/portfolio-repository.ts` (CPU, statements → built, four runs each): the change alone 20–22 → 26–28
   * µs on SQLite, 103–130 → 139–165 µs on PostgreSQL; a whole `PATCH /portfolios/:id` 116–167 → 128–136 µs on
   * SQLite, 413–500 → 428–520 µs on PostgreSQL, within the runs' spread. PATCH is not a busy route.
   */
  async change (id: string, input: UpdatePortfolioInput): Promise<Versioned<Portfolio> | undefined> {
    await this.trx.updateTable('portfolios')
      .set({ ...columnsOf(input), updated_at: this.now, version: sql<number>`version + 1` })
      .where('id', '=', id).execute()
    const row = (await this.run.byId([id], this.trx))[0]
    if (row === undefined) return undefined
    this.announce.portfolio(id)
    return { value: toPortfolio(row), version: row.version }
  }

  /** Deletes the portfolio, its assets and their transactions; false when there was no such portfolio. */
  async delete (id: string): Promise<boolean> {
    await this.run.delete.transactions([id], this.trx)
    await this.run.delete.assets([id], this.trx)
    const deleted = await this.run.delete.portfolio([id], this.trx) > 0
    if (deleted) this.announce.portfolio(id, true)
    return deleted
  }
}
