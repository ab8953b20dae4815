import { MeSchema } from '../schemas/auth.js'
import { operation } from './operation.js'

/** The auth module's declared route (its others answer the token itself, not a domain's data). */
export const authOperations = [
  operation({
    input: {},
    output: MeSchema,
    scope: 'principal',
    run: async (domain, call) => await domain.principals.me(call.access),
    rest: {
      method: 'GET',
      url: '/me',
      operationId: 'getMe',
      summary: 'The calling principal with its claims',
      description: 'The principal of the Bearer token with the claims the service verified (iss, iat, exp, nbf, ' +
        'sub, jti, prv and any custom claim), never the raw token (docs/api.md#tokens).',
      errors: [401],
      preventCache: true
    },
    graphql: { query: 'me', nullable: true, description: 'The calling principal with its claims' }
  })
]
