import type { Access, Principal } from './access.js'

/** The calling principal as answered (docs/api.md#resources, Principal): never its raw token. */
export type Me = Pick<Principal, 'id' | 'type' | 'expiresAt' | 'issuedAt' | 'payload'>

/** Who the principal is, without its claims (`/auth/profile`). */
export type PrincipalSummary = Omit<Me, 'payload'>

/** The caller itself, behind the Bearer token. */
export class PrincipalService {
  async me (access: Access): Promise<Me> {
    const { id, type, expiresAt, issuedAt, payload } = await access.principal()
    return { id, type, expiresAt, issuedAt, payload }
  }

  async summary (access: Access): Promise<PrincipalSummary> {
    const { id, type, expiresAt, issuedAt } = await access.principal()
    return { id, type, expiresAt, issuedAt }
  }
}
