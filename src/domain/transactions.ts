import { NotFoundError, NotFoundFeminineError } from '../errors.js'
import type { Trade } from '../schemas/average-cost.js'
import { pageOf } from '../schemas/common.js'
import type { AssetTransaction, CreateTransactionInput } from '../schemas/transaction.js'
import type { TransactionRepository } from '../store/transactions.js'
import type { Access } from './access.js'
import { assertInputRules } from './assets.js'
import { found, possibleId, type PageRequest } from './common.js'
import { reachable, reached, type Owners } from './ownership.js'

const missingAsset = (): Error => new NotFoundError('Ativo')
const missingTransaction = (): Error => new NotFoundFeminineError('Transação')

/**
 * A validated transaction as the store takes it (docs/api.md#inputs): quantity and price of at
 * most 8 decimals, a fee of at most 2 (0 when absent), a date from 1990-01-01 to today.
 */
export function createTransactionInput (input: CreateTransactionInput): Trade {
  assertInputRules(input)
  return { type: input.type, date: input.date, quantity: input.quantity, price: input.price, fee: input.fee ?? 0 }
}

/**
 * The dated buys and sales of assets (docs/api.md#transactions), each method within the caller's
 * portfolio scope (docs/api.md#whose-portfolios). An unknown asset, or another user's, is
 * NOT_FOUND (`Ativo não encontrado`), an unknown transaction of it NOT_FOUND (`Transação não
 * encontrada`); a sale of more than is held at its date, or a removal that would leave less than
 * nothing held at some date, is INSUFFICIENT_QUANTITY and changes nothing. Every change sets the
 * asset's quantity, price (the average price) and value.
 */
export class TransactionService {
  /** `assets`: who owns the asset a transaction is of. */
  constructor (private readonly transactions: TransactionRepository, private readonly assets: Owners) {}

  /** The asset's transactions in the order they count: by date, then as recorded. */
  async list (access: Access, assetId: string, page: PageRequest): Promise<AssetTransaction[]> {
    const scope = await access.portfolioScope()
    return await found(assetId, missingAsset, async id =>
      await reachable(scope, id, this.assets) ? await this.transactions.list(id, pageOf(page)) : undefined)
  }

  async add (access: Access, assetId: string, input: CreateTransactionInput): Promise<AssetTransaction> {
    const scope = await access.portfolioScope()
    const trade = createTransactionInput(input)
    return await found(assetId, missingAsset, async id =>
      await reachable(scope, id, this.assets) ? await this.transactions.add(id, trade) : undefined)
  }

  async remove (access: Access, assetId: string, transactionId: string): Promise<void> {
    const scope = await access.portfolioScope()
    if (!possibleId(assetId)) throw missingAsset()
    if (!possibleId(transactionId)) throw missingTransaction()
    if (!await reachable(scope, assetId, this.assets)) throw missingAsset()
    const removal = await this.transactions.remove(assetId, transactionId)
    if (removal === 'no asset') throw missingAsset()
    if (removal === 'no transaction') throw missingTransaction()
  }

  /**
   * The transactions of several assets, each's in the order they count, in one read (GraphQL's
   * loader); an asset out of the caller's scope has none, as an unknown one.
   */
  async ofAssets (access: Access, assetIds: readonly string[]): Promise<Map<string, AssetTransaction[]>> {
    const scope = await access.portfolioScope()
    return await this.transactions.ofAssets(await reached(scope, assetIds, this.assets))
  }
}
