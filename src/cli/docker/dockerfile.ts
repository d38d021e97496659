// The Dockerfile of a project's image (`hangar dockerfile`, `build`, `up`): a build stage that installs Hangar
// (from the package in .hangar-docker/, its native better-sqlite3 compiled there) and the project's production
// dependencies, and a runtime stage running `hangar serve` on 0.0.0.0:8000 as an unprivileged user.
import { DATA_DIR, HANGAR_HOME, IMAGE_PORT, IMAGE_UID, imageEntrypoint } from "../../lib/image-layout.js";
import { graphsInImage, SECTION_VARIABLES, type DockerProject, type PackageDir } from "./project.js";

/** The folder of the build context holding Hangar's package (./package.ts writes it). */
export const PACKAGE_DIR = ".hangar-docker";
export { DATA_DIR, HANGAR_HOME, IMAGE_PORT, IMAGE_UID };

export interface DockerfileOptions {
  /** Hangar's version (the package file's name). */
  version: string;
  /** Whether .hangar-docker/ holds Hangar's package-lock.json (a checkout), installed with it. */
  lockfile: boolean;
  /** The runtime stage's image (default `node:<node_version>-bookworm-slim`); also the build stage's by default. */
  baseImage?: string;
  /** The build stage's image (default `node:<node_version>-bookworm`, which has python3, make and g++). */
  buildImage?: string;
}

/** The package file's name in .hangar-docker/. */
export const packageFile = (version: string) => `hangar-${version}.tgz`;

/** A value for an `ENV` line, quoted so the builder takes it as it is. */
export function envValue(value: string): string {
  if (!value.includes("'")) return `'${value}'`;
  return `"${value.replace(/[\\"$]/g, (c) => `\\${c}`)}"`;
}

/** The install command of a package folder's production dependencies. */
export function installCommand(pkg: PackageDir): string {
  const m = pkg.manager;
  switch (m.kind) {
    case "npm":
      return m.lockfile ? "npm ci --omit=dev" : "npm install --omit=dev";
    case "yarn":
      return m.berry
        ? "corepack enable && yarn workspaces focus --all --production"
        : "yarn install --frozen-lockfile --production --non-interactive";
    case "pnpm":
      return "corepack enable && pnpm install --frozen-lockfile --prod";
  }
}

/** The files of a package folder its install reads (package.json, its lockfile, yarn's settings). */
function manifests(pkg: PackageDir): string[] {
  const files = ["package.json"];
  if (pkg.manager.lockfile) files.push(pkg.manager.lockfile);
  if (pkg.manager.kind === "yarn" && pkg.manager.berry) files.push(".yarnrc.yml");
  return files.map((f) => (pkg.dir === "." ? f : `${pkg.dir}/${f}`));
}

/** JSON array of a Dockerfile's exec form. */
const execForm = (args: string[]) => JSON.stringify(args).replace(/","/g, '", "');

/**
 * The HEALTHCHECK probe: Hangar's health route on the port the server listens on (Node's own fetch): a `--port`
 * given after the image's name (read from the command line of the container's first process, the entry point),
 * else PORT, else the image's port.
 */
const HEALTH_PROBE =
  "let a=[];try{a=require('fs').readFileSync('/proc/1/cmdline','utf8').split('\\0')}catch{}" +
  "const i=a.findIndex(x=>x==='--port'||x.startsWith('--port='));" +
  "const p=i<0?process.env.PORT||" +
  IMAGE_PORT +
  ":a[i].startsWith('--port=')?a[i].slice(7):a[i+1];" +
  "fetch('http://127.0.0.1:'+p+'/ok').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))";

/** The build stage's lines that install Hangar in HANGAR_HOME, from the package in .hangar-docker/. */
function hangarInstall(o: DockerfileOptions): string[] {
  const hangarFiles = [
    `${PACKAGE_DIR}/package.json`,
    ...(o.lockfile ? [`${PACKAGE_DIR}/package-lock.json`] : []),
  ];
  return [
    "ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false",
    `WORKDIR ${HANGAR_HOME}`,
    `COPY ${hangarFiles.join(" ")} ./`,
    "# Hangar's dependencies (its lockfile, when there is one), only two install scripts run: esbuild's, and",
    "# better-sqlite3's, which downloads its prebuilt binding, else compiles it against this image's Node.",
    'RUN prefix="$(dirname "$(dirname "$(command -v node)")")" \\',
    '    && if [ -f "$prefix/include/node/node.h" ]; then export npm_config_nodedir="$prefix"; fi \\',
    "    && npm install --omit=dev --ignore-scripts \\",
    "    && npm rebuild better-sqlite3 esbuild \\",
    "    && rm -rf node_modules/better-sqlite3/build/Release/obj.target node_modules/better-sqlite3/deps \\",
    "    && rm -rf /root/.npm /root/.cache",
    `COPY ${PACKAGE_DIR}/${packageFile(o.version)} /tmp/hangar.tgz`,
    `RUN tar -xzf /tmp/hangar.tgz --strip-components=1 --no-same-owner -C ${HANGAR_HOME} && rm /tmp/hangar.tgz`,
  ];
}

/** The runtime stage's first lines: the unprivileged user, the data volume's folder, Hangar from the build stage. */
function runtimeWithHangar(): string[] {
  return [
    "RUN if command -v useradd >/dev/null; then \\",
    `      groupadd --system --gid ${IMAGE_UID} hangar \\`,
    `      && useradd --system --uid ${IMAGE_UID} --gid hangar --create-home --home-dir /home/hangar --shell /usr/sbin/nologin hangar; \\`,
    `    else addgroup -S -g ${IMAGE_UID} hangar && adduser -S -D -u ${IMAGE_UID} -G hangar -h /home/hangar hangar; fi \\`,
    `    && mkdir -p ${DATA_DIR} && chown hangar:hangar ${DATA_DIR}`,
    `COPY --from=build ${HANGAR_HOME} ${HANGAR_HOME}`,
    `RUN ln -s ${HANGAR_HOME}/bin/hangar.js /usr/local/bin/hangar`,
  ];
}

/** The runtime stage's last lines: the volume, the user, the port and the health check. */
const runtimeTail = () => [
  `VOLUME ${DATA_DIR}`,
  "USER hangar",
  `EXPOSE ${IMAGE_PORT}`,
  `HEALTHCHECK --interval=30s --timeout=30s --start-period=60s --retries=3 CMD ${execForm(["node", "-e", HEALTH_PROBE])}`,
];

/** The Dockerfile of the project's image. */
export function dockerfile(p: DockerProject, o: DockerfileOptions): string {
  const runtime = o.baseImage ?? `node:${p.nodeVersion}-bookworm-slim`;
  const build = o.buildImage ?? o.baseImage ?? `node:${p.nodeVersion}-bookworm`;
  const userLines = p.dockerfileLines.length
    ? ["# dockerfile_lines of langgraph.json", ...p.dockerfileLines]
    : [];
  const w = p.workdir;

  const deps: string[] = [];
  for (const pkg of p.packages) {
    const dest = pkg.dir === "." ? "./" : `./${pkg.dir}/`;
    deps.push(`COPY ${manifests(pkg).join(" ")} ${dest}`);
    const cd = pkg.dir === "." ? "" : `cd ${pkg.dir} && `;
    deps.push(`RUN ${cd}${installCommand(pkg)}`);
  }
  const ownPackage = p.packages.some((pkg) => pkg.dir === ".");

  const env: string[] = [`PORT=${IMAGE_PORT}`];
  for (const [key, name] of Object.entries(SECTION_VARIABLES)) {
    const value = key === "graphs" ? graphsInImage(p) : p.sections[key as keyof typeof SECTION_VARIABLES];
    if (value !== undefined) env.push(`${name}=${envValue(JSON.stringify(value))}`);
  }

  const entrypoint = imageEntrypoint(`${w}/${p.configName}`);

  return [
    `# The Agent Server image of ${p.configName} in ${w.slice("/deps/".length)}, written by Hangar ${o.version}`,
    `# (\`hangar dockerfile\`; \`hangar build\` builds the same). Build it from the project's directory, beside the`,
    `# ${PACKAGE_DIR}/ folder that holds Hangar's package:  docker build -t my-agent .`,
    "# Run it on its data volume (embedded SQLite):  docker run -p 127.0.0.1:8000:8000 -v my-agent-data:/data my-agent",
    "# or on PostgreSQL + Redis:  docker run -p 127.0.0.1:8000:8000 -e DATABASE_URI=postgres://... -e REDIS_URI=redis://... my-agent",
    "# (then `--mode api` or `--mode worker` after the image's name for one role). Details: Hangar's docs/docker.md.",
    "",
    "# ---- build: Hangar and the project's production dependencies, native modules compiled (python3, make, g++)",
    `FROM ${build} AS build`,
    ...userLines,
    ...hangarInstall(o),
    `WORKDIR ${w}`,
    ...deps,
    "COPY . ./",
    ownPackage
      ? `RUN rm -rf ${PACKAGE_DIR}`
      : // No package.json: the graphs import the packages of Hangar's installation, as ES modules (as `hangar deploy`
        // builds such a project).
        `RUN rm -rf ${PACKAGE_DIR} && ln -s ${HANGAR_HOME}/node_modules node_modules \\\n` +
        `    && printf '{"private": true, "type": "module"}\\n' > package.json`,
    "",
    "# ---- the image: Node, Hangar and the project; the server runs as an unprivileged user",
    `FROM ${runtime}`,
    ...userLines,
    ...runtimeWithHangar(),
    `COPY --from=build ${w} ${w}`,
    `WORKDIR ${w}`,
    "# The official image's variables: the sections of langgraph.json, and the port.",
    ...env.map((e) => `ENV ${e}`),
    ...runtimeTail(),
    "# `hangar serve` as PID 1 (SIGTERM drains): on /data unless DATABASE_URI (or DATABASE_URL) names PostgreSQL.",
    "# Arguments after the image's name replace `serve`: `--mode worker`, `serve --mode api`, `check`, ...",
    `ENTRYPOINT ${execForm(entrypoint)}`,
    'CMD ["serve"]',
    "",
  ].join("\n");
}

/**
 * The Dockerfile of Hangar's image without a project (`hangar build --base-only`): Node, Hangar in HANGAR_HOME with
 * `hangar` on PATH, the unprivileged user, the /data folder. The control plane assembles the images of deployments
 * it builds for listeners on it (HANGAR_CP_IMAGE_BASE), copying a built project in, with nothing to run.
 */
export function baseDockerfile(o: DockerfileOptions & { nodeVersion: string }): string {
  const runtime = o.baseImage ?? `node:${o.nodeVersion}-bookworm-slim`;
  const build = o.buildImage ?? o.baseImage ?? `node:${o.nodeVersion}-bookworm`;
  return [
    `# Hangar ${o.version} without a project (\`hangar build --base-only\`): the base of the images the control`,
    "# plane assembles for deployments assigned to a listener (HANGAR_CP_IMAGE_BASE). Details: docs/listener.md.",
    "",
    `FROM ${build} AS build`,
    ...hangarInstall(o),
    "",
    `FROM ${runtime}`,
    ...runtimeWithHangar(),
    `ENV PORT=${IMAGE_PORT}`,
    ...runtimeTail(),
    'ENTRYPOINT ["hangar"]',
    'CMD ["--help"]',
    "",
  ].join("\n");
}

/** The .dockerignore written when the project has none. */
export function dockerignore(p: DockerProject): string {
  const extra = p.envFile && p.envFile !== ".env" ? [p.envFile] : [];
  return [
    "# Written by Hangar (`hangar dockerfile` / `hangar build`): what never goes into the image. Secrets reach the",
    "# container at run time (docker run --env-file .env); data lives in its volume; dependencies are installed",
    "# in the image.",
    ".env",
    ".env.*",
    "!.env.example",
    ...extra,
    ".hangar",
    ".hangar-control-plane",
    ".langgraph_api",
    "node_modules",
    "**/node_modules",
    ".git",
    "*.log",
    ".DS_Store",
    "",
  ].join("\n");
}
