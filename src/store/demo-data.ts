import type { AssetType } from '../schemas/asset.js'

/** A buy (in `lots`) or a sale (in `sales`). */
interface DemoLot {
  /** Made this many months before the store was seeded. */
  monthsAgo: number
  quantity: number
  price: number
  /** Fees and taxes paid on it; none when absent. */
  fee?: number
}

export interface DemoAsset {
  name: string
  symbol: string
  type: AssetType
  /**
   * What its lots and sales leave held, and its average price (docs/api.md#average-cost): the data states the
   * position the domain replays from them (test/store/store.test.ts checks that it does), so that seeding writes
   * rows and computes nothing.
   */
  quantity: number
  averagePrice: number
  /**
   * A last known unit price, as a PATCH of `price` sets it (docs/api.md#transactions): for a bond the
   * quote provider does not price. Absent: the average price.
   */
  price?: number
  /** The buys. */
  lots: DemoLot[]
  /** The sales, each of no more than is held at its date. */
  sales?: DemoLot[]
}

export interface DemoPortfolio {
  name: string
  description: string
  userId: string
  assets: DemoAsset[]
}

/**
 * Demo portfolios for users "1" and "2" (`npm run token` mints sub "1"), with Brazilian
 * assets of every type and buys, sales and fees spread over the last two years, so dashboards
 * have a history and a realized result. Loaded on the first start of an empty development store
 * and by /reset.
 */
export const DEMO_PORTFOLIOS: readonly DemoPortfolio[] = [
  {
    name: 'Carteira Principal',
    description: 'Ações e renda fixa de longo prazo',
    userId: '1',
    assets: [
      {
        name: 'Petrobras PN',
        symbol: 'PETR4',
        type: 'STOCK',
        quantity: 150,
        averagePrice: 34.05,
        lots: [
          { monthsAgo: 18, quantity: 100, price: 31.2, fee: 4.9 },
          { monthsAgo: 6, quantity: 100, price: 36.9, fee: 4.9 }
        ],
        sales: [{ monthsAgo: 2, quantity: 50, price: 38.75, fee: 4.9 }]
      },
      {
        name: 'Vale ON',
        symbol: 'VALE3',
        type: 'STOCK',
        quantity: 150,
        averagePrice: 68.4,
        lots: [{ monthsAgo: 14, quantity: 150, price: 68.4 }]
      },
      {
        name: 'Itaú Unibanco PN',
        symbol: 'ITUB4',
        type: 'STOCK',
        quantity: 220,
        averagePrice: 28.5,
        lots: [
          { monthsAgo: 20, quantity: 200, price: 26.7, fee: 4.9 },
          { monthsAgo: 3, quantity: 100, price: 32.1, fee: 4.9 }
        ],
        sales: [{ monthsAgo: 1, quantity: 80, price: 34.6, fee: 4.9 }]
      },
      {
        name: 'Tesouro IPCA+ 2035',
        symbol: 'IPCA35',
        type: 'BOND',
        quantity: 2.5,
        averagePrice: 2105.3,
        price: 2280.9,
        lots: [{ monthsAgo: 12, quantity: 2.5, price: 2105.3 }]
      },
      {
        name: 'CSHG Logística FII',
        symbol: 'HGLG11',
        type: 'FUND',
        quantity: 40,
        averagePrice: 162.4,
        lots: [{ monthsAgo: 9, quantity: 40, price: 162.4 }]
      }
    ]
  },
  {
    name: 'Reserva Alternativa',
    description: 'Cripto e ouro',
    userId: '1',
    assets: [
      {
        name: 'Bitcoin',
        symbol: 'BTC',
        type: 'CRYPTO',
        quantity: 0.04,
        averagePrice: 324_000,
        lots: [
          { monthsAgo: 10, quantity: 0.03, price: 310_000, fee: 18.6 },
          { monthsAgo: 2, quantity: 0.02, price: 345_000, fee: 13.8 }
        ],
        sales: [{ monthsAgo: 1, quantity: 0.01, price: 352_000, fee: 7.04 }]
      },
      {
        name: 'Ouro (grama)',
        symbol: 'GOLD',
        type: 'COMMODITY',
        quantity: 25,
        averagePrice: 338.9,
        lots: [{ monthsAgo: 15, quantity: 25, price: 338.9 }]
      },
      {
        name: 'Apple Inc. (em dólares)',
        symbol: 'AAPL',
        type: 'STOCK',
        quantity: 4,
        averagePrice: 1150.4,
        price: 1219.6,
        lots: [{ monthsAgo: 7, quantity: 4, price: 1150.4 }]
      }
    ]
  },
  {
    name: 'Aposentadoria',
    description: 'Índice e Tesouro Selic',
    userId: '2',
    assets: [
      {
        name: 'iShares Ibovespa',
        symbol: 'BOVA11',
        type: 'FUND',
        quantity: 120,
        averagePrice: 116.9,
        lots: [
          { monthsAgo: 24, quantity: 60, price: 112.5 },
          { monthsAgo: 12, quantity: 60, price: 121.3 }
        ]
      },
      {
        name: 'Tesouro Selic 2029',
        symbol: 'SELIC29',
        type: 'BOND',
        quantity: 1.2,
        averagePrice: 14480.1,
        price: 15_120.44,
        lots: [{ monthsAgo: 8, quantity: 1.2, price: 14_480.1 }]
      },
      {
        name: 'Ethereum',
        symbol: 'ETH',
        type: 'CRYPTO',
        quantity: 0.8,
        averagePrice: 15_250,
        lots: [{ monthsAgo: 5, quantity: 0.8, price: 15_250 }]
      },
      {
        name: 'Banco do Brasil ON',
        symbol: 'BBAS3',
        type: 'STOCK',
        quantity: 100,
        averagePrice: 28.6,
        lots: [{ monthsAgo: 4, quantity: 100, price: 28.6 }]
      }
    ]
  }
]
