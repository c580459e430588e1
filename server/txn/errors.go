package txn

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Error codes the coordinator answers with, short names for kerr's.
var (
	errNone                      int16 = 0
	errProducerFenced                  = kerr.ProducerFenced.Code
	errInvalidProducerEpoch            = kerr.InvalidProducerEpoch.Code
	errConcurrentTransactions          = kerr.ConcurrentTransactions.Code
	errInvalidProducerIDMapping        = kerr.InvalidProducerIDMapping.Code
	errInvalidTxnState                 = kerr.InvalidTxnState.Code
	errInvalidRequest                  = kerr.InvalidRequest.Code
	errNotCoordinator                  = kerr.NotCoordinator.Code
	errLoadInProgress                  = kerr.CoordinatorLoadInProgress.Code
	errCoordinatorNotAvailable         = kerr.CoordinatorNotAvailable.Code
	errUnknownServerError              = kerr.UnknownServerError.Code
	errInvalidTransactionTimeout       = kerr.InvalidTransactionTimeout.Code
	errTransactionAbortable            = kerr.TransactionAbortable.Code
	errOperationNotAttempted           = kerr.OperationNotAttempted.Code
	errUnknownTopicOrPartition         = kerr.UnknownTopicOrPartition.Code
	errTransactionalIDNotFound         = kerr.TransactionalIDNotFound.Code
)

// downgradeFenced: clients older than PRODUCER_FENCED (KIP-588) know the
// same condition as INVALID_PRODUCER_EPOCH (KafkaApis, per API: InitProducerId
// below v4, AddPartitionsToTxn, AddOffsetsToTxn and EndTxn below v2).
func downgradeFenced(code int16, old bool) int16 {
	if old && code == errProducerFenced {
		return errInvalidProducerEpoch
	}
	return code
}

// codeOf is Kafka's Errors.forException for the errors our interfaces
// return: a kerr code as itself, anything else UNKNOWN_SERVER_ERROR.
func codeOf(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return errUnknownServerError
}

// appendErrorCode maps a failed append to __transaction_state to the code a
// client gets (TransactionStateManager.appendTransactionToLog).
func appendErrorCode(err error) int16 {
	if err == nil {
		return errNone
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return errCoordinatorNotAvailable
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		// A transport or disk error of our own log layer: let the client
		// retry, as for a timeout.
		return errCoordinatorNotAvailable
	}
	switch ke {
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut:
		return errCoordinatorNotAvailable
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
		return errNotCoordinator
	case kerr.MessageTooLarge, kerr.RecordListTooLarge:
		return errUnknownServerError
	}
	return ke.Code
}
