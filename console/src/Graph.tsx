// A graph as a picture: the nodes and edges of GET /assistants/{id}/graph (subgraphs included with xray), laid
// out top to bottom by dagre and drawn as SVG; conditional edges dashed.
import dagre from "@dagrejs/dagre";

interface GraphJson {
  nodes: { id: string | number; name?: string; data?: unknown }[];
  edges: { source: string | number; target: string | number; conditional?: boolean; data?: unknown }[];
}

const W = 150;
const H = 36;

function label(node: GraphJson["nodes"][number]): string {
  const id = String(node.id);
  if (id === "__start__") return "start";
  if (id === "__end__") return "end";
  return typeof node.name === "string" && node.name ? node.name : id;
}

export function GraphPicture({ graph }: { graph: GraphJson }) {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: 24, ranksep: 40, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of graph.nodes) g.setNode(String(n.id), { width: W, height: H });
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
