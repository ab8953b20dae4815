import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { reusableModule } from '../../plugins/reusable-module.js'
import { mintToken, type MintOptions } from '../../schemas/tokens.js'
import { demoPage, DEMO_STYLE } from './page.js'
import { demoScript } from './script.js'

export interface DemoModuleOptions {
  /** Registers `/demo` (development only: docs/api.md#development-only-routes); without it, nothing. */
  devRoutes: boolean
  /** How the page's token for the demo user is signed: the service's own secret, as `npm run token` signs. */
  token: Omit<MintOptions, 'type' | 'sub' | 'now'>
}

/** The demo data's user (`src/store/demo-data.ts`): the page's token is this user's. */
const DEMO_USER = '1'

/**
 * The page's own files only, scripts and styles from this origin, requests to this origin (the
 * API), no frame: the page loads nothing from elsewhere (no CDN).
 */
const PAGE_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/**
 * `/demo` (docs/api.md#the-demo-page): what a frontend developer opens to see what the API gives
 * before writing a line — a portfolio's performance drawn against IBOVESPA from
 * `GET /portfolios/:id/performance`, and its live valuation read from
 * `GET /portfolios/:id/valuation/stream`. The page sends `Authorization: Bearer` with a token the
 * server signs for the demo user at each visit (development only), and `x-api-key` only when its
 * API-key field is filled — the development fallback under PORTFOLIO_ACCESS=api-key (docs/api.md#the-demo-page).
 */
const demoModule: FastifyPluginAsyncTypebox<DemoModuleOptions> = async (app, options) => {
  if (!options.devRoutes) return
  const hidden = { schema: { hide: true } }
  const script = `(${demoScript.toString()})()\n`
  app.get('/demo', hidden, async (_request, reply) => {
    const token = mintToken({ ...options.token, type: 'user', sub: DEMO_USER })
    return await reply.type('text/html; charset=utf-8').header('content-security-policy', PAGE_POLICY)
      .send(demoPage(token))
  })
  app.get('/demo/demo.js', hidden, async (_request, reply) =>
    await reply.type('text/javascript; charset=utf-8').send(script))
  app.get('/demo/demo.css', hidden, async (_request, reply) =>
    await reply.type('text/css; charset=utf-8').send(DEMO_STYLE))
}

export default reusableModule(demoModule, { name: 'bff-demo', fastify: '5.x' })
