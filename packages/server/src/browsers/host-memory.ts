import { readFileSync } from "node:fs";
import { freemem } from "node:os";

/**
 * Bytes of memory the host can give new processes now: Linux's `MemAvailable` (free
 * memory plus the page cache and buffers it can reclaim), elsewhere what Node reports
 * free. `os.freemem()` on Linux counts only unused pages, which a busy host's cache keeps
 * near zero, so it would refuse creates the host has room for.
 */
export function availableMemoryBytes(): number {
  try {
    const match = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync("/proc/meminfo", "latin1"));
    if (match !== null) return Number(match[1]) * 1024;
  } catch {
    // No /proc (not Linux): what Node can tell.
  }
  return freemem();
}
