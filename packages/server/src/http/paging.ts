import { limits } from "@browser-service/types";
import type { FastifyReply } from "fastify";

/** The spec's default page size. */
export const DEFAULT_PAGE_LIMIT = limits.parameters.Limit.default;

/** Offset and limit of a list request, with the spec's defaults applied. */
export function pageOf(query: { offset?: number; limit?: number }): { offset: number; limit: number } {
  return { offset: query.offset ?? limits.parameters.Offset.default, limit: query.limit ?? DEFAULT_PAGE_LIMIT };
}

/**
 * Sets `X-Has-More` and `X-Next-Offset` of a list response: the absolute offset of the
 * next page, or `0` on the last page.
 */
export function setPageHeaders(reply: FastifyReply, offset: number, count: number, hasMore: boolean): void {
  reply.header("x-has-more", String(hasMore));
  reply.header("x-next-offset", String(hasMore ? offset + count : 0));
}
