declare module 'swagger-ui-dist/absolute-path.js' {
  /** The directory holding Swagger UI's static files. */
  const getAbsoluteFSPath: () => string;
  export default getAbsoluteFSPath;
}
