// A graph as a picture: the nodes and edges of GET /assistants/{id}/graph (subgraphs included with xray), laid
// out top to bottom by dagre and drawn as SVG; conditional edges dashed; a subgraph's nodes (`research:collect`)
// inside a box named after it.
import dagre from "@dagrejs/dagre";

interface GraphJson {
  nodes: { id: string | number; name?: string; data?: unknown }[];
  edges: { source: string | number; target: string | number; conditional?: boolean; data?: unknown }[];
}

const W = 150;
const H = 36;

/** The subgraph a node is in: its id's namespace (`research` for `research:collect`), or none. */
function clusterOf(id: string): string | undefined {
  const i = id.lastIndexOf(":");
  return i > 0 ? id.slice(0, i) : undefined;
}

function label(node: GraphJson["nodes"][number]): string {
  const id = String(node.id);
  const name = typeof node.name === "string" && node.name ? node.name : id;
  const last = name.slice(name.lastIndexOf(":") + 1);
  if (last === "__start__") return "start";
  if (last === "__end__") return "end";
  // Inside its subgraph's box, a node is named without the box's name.
  return clusterOf(id) ? last : name;
}

const CLUSTER = "cluster ";

export function GraphPicture({ graph }: { graph: GraphJson }) {
  const g = new dagre.graphlib.Graph({ multigraph: true, compound: true });
  g.setGraph({ rankdir: "TB", nodesep: 24, ranksep: 40, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  const clusters = new Set<string>();
  for (const n of graph.nodes) {
    const id = String(n.id);
    g.setNode(id, { width: W, height: H });
    // Its subgraph's box, and that box's own (a subgraph of a subgraph), each once.
    let child = id;
    for (let c = clusterOf(id); c; child = CLUSTER + c, c = clusterOf(c)) {
      if (!clusters.has(c)) {
        clusters.add(c);
        g.setNode(CLUSTER + c, { paddingTop: 22, paddingBottom: 10, paddingLeft: 10, paddingRight: 10 });
      }
      g.setParent(child, CLUSTER + c);
    }
  }
  graph.edges.forEach((e, i) => g.setEdge(String(e.source), String(e.target), {}, `e${i}`));
  dagre.layout(g);
  const { width = 0, height = 0 } = g.graph();
  return (
    <svg
      className="graph"
      role="img"
      aria-label="graph"
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
    >
      {[...clusters].map((c) => {
        const box = g.node(CLUSTER + c) as { x: number; y: number; width: number; height: number };
        return (
          <g key={CLUSTER + c} data-testid="graph-subgraph" data-subgraph={c}>
            <rect
              x={box.x - box.width / 2}
              y={box.y - box.height / 2}
              width={box.width}
              height={box.height}
              rx={8}
              className="subgraph"
            />
            <text x={box.x - box.width / 2 + 8} y={box.y - box.height / 2 + 15} className="subgraph-name">
              {c}
            </text>
          </g>
        );
      })}
      {graph.edges.map((e, i) => {
        const edge = g.edge({ v: String(e.source), w: String(e.target), name: `e${i}` }) as
          { points?: { x: number; y: number }[] } | undefined;
        const d = (edge?.points ?? []).map((p, j) => `${j ? "L" : "M"}${p.x},${p.y}`).join(" ");
        return (
          <path
            key={i}
            d={d}
            className={e.conditional ? "edge conditional" : "edge"}
            markerEnd="url(#arrow)"
          />
        );
      })}
      {graph.nodes.map((n) => {
        const p = g.node(String(n.id));
        const id = String(n.id);
        const edge = id === "__start__" || id === "__end__";
        return (
          <g
            key={id}
            data-testid="graph-node"
            data-node={id}
            transform={`translate(${p.x - W / 2},${p.y - H / 2})`}
          >
            <rect width={W} height={H} rx={edge ? H / 2 : 6} className={edge ? "node terminal" : "node"} />
            <text x={W / 2} y={H / 2} dominantBaseline="middle" textAnchor="middle">
              {label(n)}
            </text>
          </g>
        );
      })}
      <defs>
        <marker
          id="arrow"
          viewBox="0 0 10 10"
          refX="10"
          refY="5"
          markerWidth="7"
          markerHeight="7"
          orient="auto"
        >
          <path d="M0,0 L10,5 L0,10 z" className="arrowhead" />
        </marker>
      </defs>
    </svg>
  );
}
