// The Hangar console: a client of the Agent Server's public API (the official SDK), served at /console.
import { createRoot } from "react-dom/client";
import { App } from "./App.tsx";
import "./style.css";

createRoot(document.getElementById("root")!).render(<App />);
