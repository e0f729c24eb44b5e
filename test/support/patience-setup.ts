import { vi } from "vitest";
import { HOOK_TIMEOUT_MS, patient, TEST_TIMEOUT_MS } from "./patience.js";

// Each file's default bounds, stretched by the load as the file starts (test/support/patience.ts).
vi.setConfig({ testTimeout: patient(TEST_TIMEOUT_MS), hookTimeout: patient(HOOK_TIMEOUT_MS) });
