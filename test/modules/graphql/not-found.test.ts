import t from 'tap'
import { GraphQLNonNull, GraphQLString, type GraphQLResolveInfo } from 'graphql'
import { ForbiddenError, NotFoundError, QuoteNotFoundError } from '../../../src/errors.js'
import { eachOrNull, nullWhereNotFound, orFalse, orNull } from '../../../src/modules/graphql/not-found.js'

t.test('a service\'s NOT_FOUND is null for a nullable field and false for a delete; other errors stay', async t => {
  t.equal(await orNull(Promise.reject(new NotFoundError('Portfolio'))), null)
  t.equal(await orNull(Promise.reject(new QuoteNotFoundError('XPTO3'))), null)
  t.equal(await orNull(Promise.resolve('found')), 'found')
  await t.rejects(orNull(Promise.reject(new ForbiddenError('no'))), { code: 'BFF_FORBIDDEN' })
  await t.rejects(orNull(Promise.reject(new Error('boom'))), { message: 'boom' })
  t.equal(await orFalse(Promise.reject(new NotFoundError('Ativo'))), false)
  t.equal(await orFalse(Promise.resolve()), true)
  await t.rejects(orFalse(Promise.reject(new ForbiddenError('no'))), { code: 'BFF_FORBIDDEN' })
})

t.test('a loader\'s batch: each NOT_FOUND item is null; any other error fails the batch', async t => {
  t.same(eachOrNull(['a', new QuoteNotFoundError('X'), 'b']), ['a', null, 'b'])
  t.throws(() => eachOrNull(['a', new ForbiddenError('no')]), { code: 'BFF_FORBIDDEN' })
})

t.test('a nullable field with a resolver answers NOT_FOUND as null; others keep their answer', async t => {
  const missing = async (): Promise<never> => { throw new NotFoundError('Portfolio') }
  const fields = nullWhereNotFound({
    nullable: { type: GraphQLString, resolve: missing },
    required: { type: new GraphQLNonNull(GraphQLString), resolve: missing },
    loaded: { type: GraphQLString }
  })
  const info = {} as unknown as GraphQLResolveInfo
  t.equal(await fields.nullable?.resolve?.(undefined, {}, {}, info), null)
  await t.rejects(async () => await fields.required?.resolve?.(undefined, {}, {}, info), { code: 'BFF_NOT_FOUND' })
  t.equal(fields.loaded?.resolve, undefined, 'a loader field is left to its loader')
})
