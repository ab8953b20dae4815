import { Type } from '@sinclair/typebox'

const Sha1Hex = Type.String({ pattern: '^[0-9a-f]{40}$' })

export const ProviderConfigSchema = Type.Object({
  userProviderHash: Sha1Hex,
  clientProviderHash: Sha1Hex,
  autoCalculated: Type.Boolean(),
  models: Type.Object({ user: Type.String(), client: Type.String() })
})
