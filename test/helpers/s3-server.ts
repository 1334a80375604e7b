/**
 * A real S3-compatible server on loopback for the tests: s3rver (the S3 REST API over a temp directory),
 * spoken to with the real AWS SDK, like MinIO or AWS would be.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** The credentials s3rver accepts. */
  accessKeyId: string;
  secretAccessKey: string;
  close(): Promise<void>;
}

export async function startS3(bucket = 'svc-media'): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), 'svc-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    close: async () => {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
