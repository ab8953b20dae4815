import { ForbiddenError, NotFoundFeminineError } from '../errors.js'
import { pageOf } from '../schemas/common.js'
import type {
  CreateExclusionInput, ExcludedTransaction, ExcludedTransactionRecord
} from '../schemas/excluded-transaction.js'
import type { Access, Principal } from './access.js'
import { existing, found, type PageRequest } from './common.js'
import type { ExclusionStore } from './ports.js'

const missing = (): Error => new NotFoundFeminineError('Exclusão')

const OTHER_CLIENT_MESSAGE = 'Acesso negado às transações de outro client'

/** A `client` acts only on its own `client_id`; a `user` on any (docs/api.md#credentials). */
function assertOwnClient (principal: Pick<Principal, 'type' | 'id'>, clientId: string): void {
  if (principal.type === 'client' && principal.id !== clientId) throw new ForbiddenError(OTHER_CLIENT_MESSAGE)
}

/** A validated create input as the store takes it: texts trimmed, `excluded_at` in the service's timestamp form. */
function createExclusionInput (input: CreateExclusionInput): CreateExclusionInput {
  return {
    client_id: input.client_id.trim(),
    transaction_id: input.transaction_id.trim(),
    reason: input.reason.trim(),
    ...(input.excluded_at === undefined ? {} : { excluded_at: new Date(input.excluded_at).toISOString() })
  }
}

/**
 * Open-finance excluded transactions (docs/api.md#resources), behind the Bearer token: a
 * `client` principal reaches only the records of its own `client_id` (403 `FORBIDDEN`
 * otherwise), a `user` any. An unknown id is NOT_FOUND (`Exclusão não encontrada`).
 */
export class ExclusionService {
  constructor (private readonly exclusions: ExclusionStore) {}

  /** Excludes a transaction once per (client_id, transaction_id); a repeat answers the stored record. */
  async create (
    access: Access, input: CreateExclusionInput
  ): Promise<{ record: ExcludedTransactionRecord, created: boolean }> {
    const principal = await access.principal()
    const exclusion = createExclusionInput(input)
    assertOwnClient(principal, exclusion.client_id)
    return await this.exclusions.create(exclusion)
  }

  async list (access: Access, clientId: string, page: PageRequest): Promise<ExcludedTransaction[]> {
    const principal = await access.principal()
    const ownClientId = clientId.trim()
    assertOwnClient(principal, ownClientId)
    return await this.exclusions.list(ownClientId, pageOf(page))
  }

  /** Removes an exclusion: its owner's (or a user's) to remove; an unknown one is NOT_FOUND. */
  async delete (access: Access, id: string): Promise<void> {
    const principal = await access.principal()
    const record = await found(id, missing, async id => await this.exclusions.get(id))
    assertOwnClient(principal, record.client_id)
    await existing(id, missing, async id => await this.exclusions.delete(id))
  }
}
