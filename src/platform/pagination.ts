// Pagination of every list: `page` from 1, `pageSize` 1..100 (default 20), and after the items the
// fields `total`, `page`, `pageSize`, `hasMore` (docs/api.md#pagination).
import { Type } from 'typebox';

export const PageQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
});

/** The pagination fields of every list, after its items. */
export const PageFields = {
  total: Type.Integer(),
  page: Type.Integer(),
  pageSize: Type.Integer(),
  hasMore: Type.Boolean(),
};

/** The values of PageFields for a page of a list of `total` items. */
export const pageInfo = (total: number, page: number, pageSize: number) => ({
  total,
  page,
  pageSize,
  hasMore: page * pageSize < total,
});
