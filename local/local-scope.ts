/**
 * Where the local stack says its AWS resources live, and the credentials its own clients sign
 * with (the local endpoints accept any; the SDK just needs some).
 */
export const LOCAL_REGION = 'us-east-1';
export const LOCAL_ACCOUNT_ID = '000000000000';
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
