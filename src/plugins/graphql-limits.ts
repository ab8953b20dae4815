/*
 * Bounds on a GraphQL document's text and shape, checked before graphql-js parses or validates
 * it. graphql-armor's rules and Mercurius's own limits are validation rules: they run on a
 * parsed document, alongside the validation they would have to protect. What is kept here is
 * what they cannot do, each with its measurement (Node 24, graphql 16):
 * - the parser recurses once per bracket: 2 000 nested levels overflowed the stack inside a
 *   call, 4 000 at a script's top level (RangeError) — so nesting is counted by the lexer first;
 * - validation compares every pair of selections at one response path: 200 copies of
 *   `portfolios { a: id }` took 142 ms to validate, 500 took 313 ms;
 * - fragments spread in fragments multiply: ten levels of ten spreads stand for 10¹⁰ selections.
 * The token limit is graphql-js's (`parseOptions.maxTokens`) too; this pass reports it in the
 * service's words before a parse is begun.
 */
import type { FastifyBaseLogger } from 'fastify'
import {
  GraphQLError, Kind, Lexer, Source, TokenKind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode
} from 'graphql'
import WebSocket from 'ws'
import { formatGraphqlError, MAX_QUERY_DEPTH, QueryRefusedError } from './graphql-errors.js'

/**
 * Brackets (`{`, `[`, `(`) a document may nest before it is refused unparsed: a document within
 * the depth limit nests far less (ten selection levels, inline fragments and input objects included).
 */
const MAX_DOCUMENT_NESTING = 64

/** What a document's text may be, checked before it is parsed. */
export interface DocumentLimits {
  /** UTF-8 bytes of the text (`GRAPHQL_MAX_DOCUMENT_BYTES`). */
  maxBytes: number
  /** Lexical tokens (names, punctuation, values; comments are not tokens). */
  maxTokens: number
}

/** The limits for a byte limit: at most one token for every two bytes it allows. */
export function documentLimits (maxBytes: number): DocumentLimits {
  return { maxBytes, maxTokens: Math.ceil(maxBytes / 2) }
}

const OPENING = new Set<string>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L])
const CLOSING = new Set<string>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R])

/**
 * Refuses, before any parsing, a document longer than the byte limit, with more tokens than the
 * token limit, or nested deeper than the parser can take: one pass of GraphQL's lexer (which
 * does not recurse), stopped at the first limit crossed. A lexical error is left to the parser,
 * which reports it in its own words.
 */
function assertDocumentWithinLimits (source: string, limits: DocumentLimits): void {
  // A UTF-8 character takes at most 3 bytes per UTF-16 unit: most texts need no byte count.
  const bytes = source.length * 3 <= limits.maxBytes ? source.length : Buffer.byteLength(source, 'utf8')
  if (bytes > limits.maxBytes) {
    const message = `document of ${bytes} bytes exceeds the limit of ${limits.maxBytes} bytes`
    throw new QueryRefusedError(message, { maxBytes: limits.maxBytes })
  }
  const lexer = new Lexer(new Source(source))
  let tokens = 0
  let nesting = 0
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      if (++tokens > limits.maxTokens) {
        const message = `document exceeds the limit of ${limits.maxTokens} tokens`
        throw new QueryRefusedError(message, { maxTokens: limits.maxTokens })
      }
      if (OPENING.has(token.kind) && ++nesting > MAX_DOCUMENT_NESTING) {
        const message = `query depth (over ${MAX_DOCUMENT_NESTING} nested levels) exceeds ` +
          `the query depth limit of ${MAX_QUERY_DEPTH}`
        throw new QueryRefusedError(message, { maxDepth: MAX_QUERY_DEPTH })
      }
      if (CLOSING.has(token.kind)) nesting--
    }
  } catch (error) {
    if (error instanceof QueryRefusedError || !(error instanceof GraphQLError)) throw error
  }
}

/** Texts remembered as within the limits (a document is usually sent many times). */
const REMEMBERED_DOCUMENTS = 1024

/** `assertDocumentWithinLimits` for one instance's requests: a text that passed is not lexed again. */
export class DocumentGuard {
  private readonly accepted = new Set<string>()

  constructor (private readonly limits: DocumentLimits) {}

  assert (source: string): void {
    if (this.accepted.has(source)) return
    assertDocumentWithinLimits(source, this.limits)
    if (this.accepted.size >= REMEMBERED_DOCUMENTS) this.accepted.clear()
    this.accepted.add(source)
  }
}

/** Field selections a document may stand for, each fragment counted again at every spread. */
const MAX_SPREAD_SELECTIONS = 5000

/**
 * Pairs of field selections at one response path (`portfolios.assets.id`, by alias) a document
 * may hold. GraphQL's validation compares every such pair to prove they can be merged, so a few
 * hundred copies of one field cost it a few hundred milliseconds; an ordinary one has a handful.
 */
const MAX_SAME_PATH_PAIRS = 1000

/**
 * Refuses, after parsing and before validation, a document whose validation would be costly:
 * one pass over it, with fragments spread (a fragment spread inside itself is left to
 * validation to report), bounded by the same limits.
 */
export function assertValidationAffordable (document: DocumentNode): void {
  const fragments = new Map<string, FragmentDefinitionNode>()
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition)
  }
  const atPath = new Map<string, number>()
  const spreading = new Set<string>()
  let selections = 0
  let pairs = 0
  const walk = (selectionSet: SelectionSetNode, path: string): void => {
    for (const selection of selectionSet.selections) {
      if (++selections > MAX_SPREAD_SELECTIONS) {
        const message = `document selects more than ${MAX_SPREAD_SELECTIONS} fields with its fragments spread`
        throw new QueryRefusedError(message, { maxSelections: MAX_SPREAD_SELECTIONS })
      }
      if (selection.kind === Kind.FIELD) {
        const fieldPath = `${path}.${selection.alias?.value ?? selection.name.value}`
        const earlier = atPath.get(fieldPath) ?? 0
        pairs += earlier
        if (pairs > MAX_SAME_PATH_PAIRS) {
          const message = 'document selects one response name too often: ' +
            `over ${MAX_SAME_PATH_PAIRS} pairs of selections to merge`
          throw new QueryRefusedError(message, { maxPairs: MAX_SAME_PATH_PAIRS })
        }
        atPath.set(fieldPath, earlier + 1)
        if (selection.selectionSet !== undefined) walk(selection.selectionSet, fieldPath)
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        walk(selection.selectionSet, path)
      } else {
        const name = selection.name.value
        const fragment = fragments.get(name)
        if (fragment === undefined || spreading.has(name)) continue
        spreading.add(name)
        walk(fragment.selectionSet, path)
        spreading.delete(name)
      }
    }
  }
  // Fragments are validated on their own too, so each is walked as a root of its own as well.
  document.definitions.forEach((definition, index) => {
    if (definition.kind === Kind.OPERATION_DEFINITION || definition.kind === Kind.FRAGMENT_DEFINITION) {
      walk(definition.selectionSet, String(index))
    }
  })
}

/** Messages that start an operation: `subscribe` (graphql-transport-ws) and `start` (the older graphql-ws). */
const STARTS = new Set(['subscribe', 'start'])

/**
 * The WebSocket of a subscription connection, whose operations' documents are checked by
 * `check` (the limits above) before Mercurius parses them. Mercurius 16 parses a subscription's
 * text with none of its HTTP options (no token limit) and only then runs its
 * `preSubscriptionParsing` hook, so neither can bound the parse; ws offers no other place to see
 * a message first than this subclass. A document `check` refuses gets an `error` message for its
 * operation id, as any refused operation does, and never reaches Mercurius; the connection stays open.
 */
export function guardedWebSocket (check: (source: string) => void, log: FastifyBaseLogger): typeof WebSocket {
  return class GuardedWebSocket extends WebSocket {
    override emit (event: string | symbol, ...args: unknown[]): boolean {
      if (event === 'message' && refused(this, args[0], check, log)) return true
      return super.emit(event, ...args)
    }
  }
}

function refused (socket: WebSocket, data: unknown, check: (source: string) => void, log: FastifyBaseLogger): boolean {
  let message: { id?: unknown, type?: unknown, payload?: { query?: unknown } } | null
  try {
    message = JSON.parse(String(data)) as typeof message
  } catch {
    // Mercurius answers a message that is not JSON itself.
    return false
  }
  const query = message?.payload?.query
  if (!STARTS.has(message?.type as string) || typeof query !== 'string') return false
  try {
    check(query)
    return false
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error
    socket.send(JSON.stringify({ type: 'error', id: message?.id, payload: [formatGraphqlError(error, log)] }))
    return true
  }
}
