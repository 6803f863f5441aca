import { render } from "preact";
import { adoptAddressToken } from "./api/token";
import { App } from "./components/App";
import "./styles.css";

adoptAddressToken(); // before the first API call
const root = document.getElementById("app");
if (root) render(<App />, root);
