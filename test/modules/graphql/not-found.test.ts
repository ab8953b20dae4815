import t from 'tap'
import { ForbiddenError, NotFoundError, QuoteNotFoundError } from '../../../src/errors.js'
import { eachOrNull, orFalse, orNull } from '../../../src/modules/graphql/not-found.js'

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
