// The order test files start in: the files that take longest (Docker builds, browsers, packed tarballs, control
// plane deployments) first, then vitest's own order (by the durations of the last run when it has them, else the
// largest file first). A long file started last keeps the run going on one core while the other idles; started
// first it overlaps with the many short ones. On a clean clone vitest has no durations yet, hence the list.
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Files known to take long (wall time), longest first; measured with HANGAR_TEST_CPU_LOG (its `wall`), 2026-11-29.
 * The Docker files run one at a time (oneDockerFileAtATime in test/helpers/docker.ts), so they are spread over the
 * list: one waiting for its turn holds a worker meanwhile. image.test.ts first, as it makes the base image the
 * others build on (minutes of debootstrap on a fresh machine).
 */
export const LONG_FILES = [
  "test/docker/image.test.ts",
  "test/e2e/package.test.ts",
  "test/browser/console.test.ts",
  "test/security/cp-secrets-uploads.test.ts",
  "test/control-plane/deploy.test.ts",
  "test/security/fuzz.test.ts",
  "test/docker/up.test.ts",
  "test/e2e/differential.test.ts",
  "test/postgres/faults.test.ts",
  "test/control-plane/official-cli.test.ts",
  "test/control-plane/reconcile.test.ts",
  "test/docker/cp-image.test.ts",
  "test/e2e/schemas.test.ts",
  "test/e2e/memory.test.ts",
  "test/e2e/cli.test.ts",
  "test/browser/fresh-clone.test.ts",
  "test/docker/official-compose.test.ts",
  // 20-50 s each
  "test/docker/dockerfile.test.ts",
  "test/e2e/backup-embedded.test.ts",
  "test/security/slow-reader.test.ts",
  "test/e2e/langchain-agents.test.ts",
  "test/e2e/serve.test.ts",
  "test/postgres/k8s-manifests.test.ts",
  "test/browser/console-control-plane.test.ts",
  "test/e2e/langgraph-0x.test.ts",
  "test/postgres/cluster.test.ts",
  "test/control-plane/admin.test.ts",
  "test/postgres/migrate-hangar.test.ts",
  "test/e2e/logging.test.ts",
  "test/postgres/lifecycle.test.ts",
  "test/e2e/run-timeout.test.ts",
];

export default class LongFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const rank = (spec: TestSpecification) => {
      const i = LONG_FILES.indexOf(relative(root, spec.moduleId));
      return i < 0 ? LONG_FILES.length : i;
    };
    // Array.prototype.sort is stable: the rest keeps vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
