/**
 * What the functions' bundles put in place of `@aws-sdk/credential-provider-node` (the alias in
 * `functionEsbuildOptions`). Lambda sets the role's credentials in the environment, the first place the
 * SDK's default chain looks; the rest of that chain (SSO, INI files, process, web identity, container,
 * IMDS, and the STS and SSO clients they carry: ~100 KB minified) never runs there, yet every client
 * would bundle it. Same shape as the SDK's `defaultProvider`, so every client takes it unchanged.
 */
interface EnvCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

/** The credentials Lambda put in the environment; a clear error where there are none. */
export function defaultProvider(): () => Promise<EnvCredentials> {
  return () => {
    const env = process.env;
    const accessKeyId = env['AWS_ACCESS_KEY_ID'];
    const secretAccessKey = env['AWS_SECRET_ACCESS_KEY'];
    if (!accessKeyId || !secretAccessKey) {
      return Promise.reject(
        new Error(
          'no AWS credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY): the Lambda runtime sets them ' +
            "from the function's role; a bundle run elsewhere needs them set",
        ),
      );
    }
    const sessionToken = env['AWS_SESSION_TOKEN'];
    const expiration = env['AWS_CREDENTIAL_EXPIRATION'];
    return Promise.resolve({
      accessKeyId,
      secretAccessKey,
      ...(sessionToken ? { sessionToken } : {}),
      ...(expiration ? { expiration: new Date(expiration) } : {}),
    });
  };
}
