import { StatsSchema } from '../schemas/stats.js'
import { operation } from './operation.js'

/** The system module's declared route (its others — readiness, provider hashes, the reset — are its own). */
export const systemOperations = [
  operation({
    input: {},
    output: StatsSchema,
    scope: 'api-key',
    run: async (domain, call) => await domain.stats.get(call.access),
    rest: {
      method: 'GET',
      url: '/stats',
      operationId: 'getStats',
      summary: 'Counts and total value of the store',
      description: 'Counts of portfolios, assets and distinct owners, and the total value of every portfolio in ' +
        'BRL (docs/api.md#resources).',
      errors: [401]
    },
    graphql: { query: 'stats', description: 'Counts and total value of the store' }
  })
]
