// SQS errors as the AWS JSON 1.0 protocol carries them. The SDK (awsQueryCompatible) reads the
// `x-amzn-query-error` header first and maps its code to the modelled exception class, falling
// back to `__type`; we send both so `instanceof QueueDoesNotExist` and friends work.

/** Modelled SQS errors: shape name → [query-compatible code, HTTP status], from the SDK's model. */
const MODELLED: Record<string, readonly [string, number]> = {
  QueueDoesNotExist: ['AWS.SimpleQueueService.NonExistentQueue', 400],
  QueueNameExists: ['QueueAlreadyExists', 400],
  ReceiptHandleIsInvalid: ['ReceiptHandleIsInvalid', 404],
  MessageNotInflight: ['AWS.SimpleQueueService.MessageNotInflight', 400],
  BatchEntryIdsNotDistinct: ['AWS.SimpleQueueService.BatchEntryIdsNotDistinct', 400],
  EmptyBatchRequest: ['AWS.SimpleQueueService.EmptyBatchRequest', 400],
  InvalidBatchEntryId: ['AWS.SimpleQueueService.InvalidBatchEntryId', 400],
  TooManyEntriesInBatchRequest: ['AWS.SimpleQueueService.TooManyEntriesInBatchRequest', 400],
  BatchRequestTooLong: ['AWS.SimpleQueueService.BatchRequestTooLong', 400],
  InvalidAttributeName: ['InvalidAttributeName', 400],
  InvalidAttributeValue: ['InvalidAttributeValue', 400],
  InvalidMessageContents: ['InvalidMessageContents', 400],
  ResourceNotFoundException: ['ResourceNotFoundException', 404],
  UnsupportedOperation: ['AWS.SimpleQueueService.UnsupportedOperation', 400],
};

export class SqsError extends Error {
  readonly status: number;
  readonly queryCode: string;
  readonly type: string;

  /** `code` is the shape name for modelled errors, or the plain query code (InvalidParameterValue, ...). */
  constructor(
    readonly code: string,
    message: string,
    options: { status?: number; type?: string } = {},
  ) {
    super(message);
    this.name = code;
    const modelled = MODELLED[code];
    this.queryCode = modelled?.[0] ?? code;
    this.status = options.status ?? modelled?.[1] ?? 400;
    this.type = options.type ?? `com.amazonaws.sqs#${code}`;
  }

  /** Sender errors are the caller's fault; SQS marks server faults `Receiver`. */
  get fault(): 'Sender' | 'Receiver' {
    return this.status >= 500 ? 'Receiver' : 'Sender';
  }
}

export const queueDoesNotExist = (): SqsError => new SqsError('QueueDoesNotExist', 'The specified queue does not exist.');

export const missingParameter = (name: string): SqsError =>
  new SqsError('MissingParameter', `The request must contain the parameter ${name}.`);

export const invalidParameter = (name: string, value: unknown, reason: string): SqsError =>
  new SqsError(
    'InvalidParameterValue',
    `Value ${typeof value === 'string' ? value : JSON.stringify(value)} for parameter ${name} is invalid. Reason: ${reason}`,
  );

export const receiptHandleIsInvalid = (handle: string): SqsError =>
  new SqsError('ReceiptHandleIsInvalid', `The input receipt handle "${handle}" is not a valid receipt handle.`);

export const internalError = (message: string): SqsError => new SqsError('InternalError', message, { status: 500 });

export const unknownOperation = (target: string): SqsError =>
  new SqsError('UnknownOperationException', `Unknown operation ${target || '(missing X-Amz-Target header)'}`, {
    type: 'com.amazon.coral.service#UnknownOperationException',
  });
