// The control plane's console: a client of the control plane's public API, served at the control plane's root.
import { createRoot } from "react-dom/client";
import { App } from "./App.tsx";
import "../style.css";
import "./cp.css";

createRoot(document.getElementById("root")!).render(<App />);
