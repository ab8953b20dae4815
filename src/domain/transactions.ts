import { NotFoundError, NotFoundFeminineError } from '../errors.js'
import type { Trade } from '../schemas/average-cost.js'
import { pageOf } from '../schemas/common.js'
import type { AssetTransaction, CreateTransactionInput } from '../schemas/transaction.js'
import type { TransactionRepository } from '../store/transactions.js'
import type { Access } from './access.js'
import { assertInputRules } from './assets.js'
import { found, possibleId, type PageRequest } from './common.js'

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
 * The dated buys and sales of assets (docs/api.md#transactions), behind the API key: every method
 * checks it first. An unknown asset is NOT_FOUND (`Ativo não encontrado`), an unknown transaction
 * of it NOT_FOUND (`Transação não encontrada`); a sale of more than is held at its date, or a
 * removal that would leave less than nothing held at some date, is INSUFFICIENT_QUANTITY and
 * changes nothing. Every change sets the asset's quantity, price (the average price) and value.
 */
export class TransactionService {
  constructor (private readonly transactions: TransactionRepository) {}

  /** The asset's transactions in the order they count: by date, then as recorded. */
  async list (access: Access, assetId: string, page: PageRequest): Promise<AssetTransaction[]> {
    await access.apiKey()
    return await found(assetId, missingAsset, async id => await this.transactions.list(id, pageOf(page)))
  }

  async add (access: Access, assetId: string, input: CreateTransactionInput): Promise<AssetTransaction> {
    await access.apiKey()
    const trade = createTransactionInput(input)
    return await found(assetId, missingAsset, async id => await this.transactions.add(id, trade))
  }

  async remove (access: Access, assetId: string, transactionId: string): Promise<void> {
    await access.apiKey()
    if (!possibleId(assetId)) throw missingAsset()
    if (!possibleId(transactionId)) throw missingTransaction()
    const removal = await this.transactions.remove(assetId, transactionId)
    if (removal === 'no asset') throw missingAsset()
    if (removal === 'no transaction') throw missingTransaction()
  }

  /** The transactions of several assets, each's in the order they count, in one read (GraphQL's loader). */
  async ofAssets (access: Access, assetIds: readonly string[]): Promise<Map<string, AssetTransaction[]>> {
    await access.apiKey()
    return await this.transactions.ofAssets(assetIds)
  }
}
