import { describe, expect, it } from "vitest";
import { idempotentMethods, retryableStatuses, retryDelayMs } from "../../src/retry.js";

const delays = { retryDelayMs: 500, maxRetryDelayMs: 30_000 };
const now = Date.parse("2025-06-01T12:00:00Z");

describe("retryDelayMs", () => {
  it("doubles the backoff per retry and takes up to a quarter off as jitter", () => {
    expect(retryDelayMs(0, null, delays, now, 0)).toBe(500);
    expect(retryDelayMs(1, null, delays, now, 0)).toBe(1000);
    expect(retryDelayMs(2, null, delays, now, 0)).toBe(2000);
    expect(retryDelayMs(2, null, delays, now, 1)).toBe(1500);
    expect(retryDelayMs(2, null, delays, now, 0.5)).toBe(1750);
  });

  it("caps the backoff at maxRetryDelayMs", () => {
    expect(retryDelayMs(10, null, delays, now, 0)).toBe(30_000);
  });

  it("honours Retry-After in seconds, without jitter", () => {
    expect(retryDelayMs(0, "2", delays, now, 0.9)).toBe(2000);
    expect(retryDelayMs(3, "0", delays, now, 0.9)).toBe(0);
  });

  it("honours Retry-After as an HTTP date, and a past date means now", () => {
    expect(retryDelayMs(0, "Sun, 01 Jun 2025 12:00:07 GMT", delays, now, 0.9)).toBe(7000);
    expect(retryDelayMs(0, "Sun, 01 Jun 2025 11:00:00 GMT", delays, now, 0.9)).toBe(0);
  });

  it("caps Retry-After at maxRetryDelayMs", () => {
    expect(retryDelayMs(0, "3600", delays, now, 0)).toBe(30_000);
    expect(retryDelayMs(0, "Sun, 01 Jun 2025 13:00:00 GMT", delays, now, 0)).toBe(30_000);
  });

  it("falls back to backoff for a Retry-After it cannot read", () => {
    expect(retryDelayMs(1, "soon", delays, now, 0)).toBe(1000);
  });
});

describe("retry rules", () => {
  it("retries only idempotent methods", () => {
    expect([...idempotentMethods].sort()).toEqual(["DELETE", "GET", "HEAD", "OPTIONS", "PUT"]);
    expect(idempotentMethods.has("POST")).toBe(false);
    expect(idempotentMethods.has("PATCH")).toBe(false);
  });

  it("retries only 408, 429, 502, 503 and 504", () => {
    expect([...retryableStatuses].sort()).toEqual([408, 429, 502, 503, 504]);
  });
});
