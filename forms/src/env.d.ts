/** Vite's `?inline` CSS imports: the stylesheet's text. */
declare module "*?inline" {
  const css: string;
  export default css;
}
