"""Kafka's message schemas, as kbatch needs them to read internal topics and control records.

WRITTEN BY ``python -m kbatch.messages.make_table`` from Apache Kafka's JSON message definitions (the file
above each entry; copies in ``fixtures/kafka-messages``).  Do not edit by hand.

    M(kind, validVersions, flexibleVersions, fields, api_key, module)   one message
    F(name, type, versions, nullable, tagged, tag, default, flexible, fields)   one field

Versions are Kafka's strings ("0+", "1-3", "2", "none"); ``fields`` of a struct or struct array are given
inline (Kafka's commonStructs resolved).  :mod:`kbatch.messages.decoder` reads bytes with this table.
"""

from kbatch.messages.spec import F, M

# The Kafka commit the current definitions come from (a removed one names its own above its entry).
KAFKA_COMMIT = 'd79bd502ec7fa49335afa422f442af80ed0ab8f6'
KAFKA_RELEASE = '4.5.0-SNAPSHOT'

SCHEMAS = {
    # metadata/src/main/resources/common/metadata/AbortTransactionRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'AbortTransactionRecord': M('metadata', '0', '0+', api_key=25, module='metadata', fields=(
        F('Reason', 'string', '0+', nullable='0+', tagged='0+', tag=0, default=None),
    )),
    # metadata/src/main/resources/common/metadata/AccessControlEntryRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'AccessControlEntryRecord': M('metadata', '0', '0+', api_key=18, module='metadata', fields=(
        F('Id', 'uuid', '0+'),
        F('ResourceType', 'int8', '0+'),
        F('ResourceName', 'string', '0+'),
        F('PatternType', 'int8', '0+'),
        F('Principal', 'string', '0+'),
        F('Host', 'string', '0+'),
        F('Operation', 'int8', '0+'),
        F('PermissionType', 'int8', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/BeginTransactionRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'BeginTransactionRecord': M('metadata', '0', '0+', api_key=23, module='metadata', fields=(
        F('Name', 'string', '0+', nullable='0+', tagged='0+', tag=0, default=None),
    )),
    # metadata/src/main/resources/common/metadata/BrokerRegistrationChangeRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'BrokerRegistrationChangeRecord': M('metadata', '0-3', '0+', api_key=17, module='metadata', fields=(
        F('BrokerId', 'int32', '0+'),
        F('BrokerEpoch', 'int64', '0+'),
        F('Fenced', 'int8', '0+', tagged='0+', tag=0),
        F('InControlledShutdown', 'int8', '1+', tagged='1+', tag=1),
        F('LogDirs', '[]uuid', '2+', tagged='2+', tag=2),
        F('CordonedLogDirs', '[]uuid', '3+', nullable='3+', tagged='3+', tag=3, default=None),
    )),
    # metadata/src/main/resources/common/metadata/ClearElrRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ClearElrRecord': M('metadata', '0', '0+', api_key=28, module='metadata', fields=(
        F('TopicName', 'string', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/ClientQuotaRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ClientQuotaRecord': M('metadata', '0', '0+', api_key=14, module='metadata', fields=(
        F('Entity', '[]EntityData', '0+', fields=(
            F('EntityType', 'string', '0+'),
            F('EntityName', 'string', '0+', nullable='0+'),
        )),
        F('Key', 'string', '0+'),
        F('Value', 'float64', '0+'),
        F('Remove', 'bool', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/ConfigRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ConfigRecord': M('metadata', '0', '0+', api_key=4, module='metadata', fields=(
        F('ResourceType', 'int8', '0+'),
        F('ResourceName', 'string', '0+'),
        F('Name', 'string', '0+'),
        F('Value', 'string', '0+', nullable='0+'),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupCurrentMemberAssignmentKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ConsumerGroupCurrentMemberAssignmentKey': M('coordinator-key', '0', 'none', api_key=8, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
        F('MemberId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupCurrentMemberAssignmentValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ConsumerGroupCurrentMemberAssignmentValue': M('coordinator-value', '0', '0+', api_key=8, module='group-coordinator', fields=(
        F('MemberEpoch', 'int32', '0+'),
        F('PreviousMemberEpoch', 'int32', '0+'),
        F('State', 'int8', '0+'),
        F('AssignedPartitions', '[]TopicPartitions', '0+', fields=(
            F('TopicId', 'uuid', '0+'),
            F('Partitions', '[]int32', '0+'),
            F('AssignmentEpochs', '[]int32', '0+', nullable='0+', tagged='0+', tag=0),
        )),
        F('PartitionsPendingRevocation', '[]TopicPartitions', '0+', fields=(
            F('TopicId', 'uuid', '0+'),
            F('Partitions', '[]int32', '0+'),
            F('AssignmentEpochs', '[]int32', '0+', nullable='0+', tagged='0+', tag=0),
        )),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupMemberMetadataKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ConsumerGroupMemberMetadataKey': M('coordinator-key', '0', 'none', api_key=5, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
        F('MemberId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupMemberMetadataValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ConsumerGroupMemberMetadataValue': M('coordinator-value', '0', '0+', api_key=5, module='group-coordinator', fields=(
        F('InstanceId', 'string', '0+', nullable='0+'),
        F('RackId', 'string', '0+', nullable='0+'),
        F('ClientId', 'string', '0+'),
        F('ClientHost', 'string', '0+'),
        F('SubscribedTopicNames', '[]string', '0+'),
        F('SubscribedTopicRegex', 'string', '0+', nullable='0+'),
        F('RebalanceTimeoutMs', 'int32', '0+', default=-1),
        F('ServerAssignor', 'string', '0+', nullable='0+'),
        F('ClassicMemberMetadata', 'ClassicMemberMetadata', '0+', nullable='0+', tagged='0+', tag=0, fields=(
            F('SessionTimeoutMs', 'int32', '0+'),
            F('SupportedProtocols', '[]ClassicProtocol', '0+', fields=(
                F('Name', 'string', '0+'),
                F('Metadata', 'bytes', '0+'),
            )),
        )),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupMetadataKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ConsumerGroupMetadataKey': M('coordinator-key', '0', 'none', api_key=3, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupMetadataValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ConsumerGroupMetadataValue': M('coordinator-value', '0', '0+', api_key=3, module='group-coordinator', fields=(
        F('Epoch', 'int32', '0+'),
        F('MetadataHash', 'int64', '0+', tagged='0+', tag=0, default=0),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupPartitionMetadataKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ConsumerGroupPartitionMetadataKey': M('coordinator-key', '0', 'none', api_key=4, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupPartitionMetadataValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ConsumerGroupPartitionMetadataValue': M('coordinator-value', '0', '0+', api_key=4, module='group-coordinator', fields=(
        F('Topics', '[]TopicMetadata', '0+', fields=(
            F('TopicId', 'uuid', '0+'),
            F('TopicName', 'string', '0+'),
            F('NumPartitions', 'int32', '0+'),
            F('PartitionMetadata', '[]PartitionMetadata', '0+', fields=(
                F('Partition', 'int32', '0+'),
                F('Racks', '[]string', '0+'),
            )),
        )),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupRegularExpressionKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ConsumerGroupRegularExpressionKey': M('coordinator-key', '0', 'none', api_key=16, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
        F('RegularExpression', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupRegularExpressionValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ConsumerGroupRegularExpressionValue': M('coordinator-value', '0', '0+', api_key=16, module='group-coordinator', fields=(
        F('Topics', '[]string', '0+'),
        F('Version', 'int64', '0+'),
        F('Timestamp', 'int64', '0+'),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupTargetAssignmentMemberKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ConsumerGroupTargetAssignmentMemberKey': M('coordinator-key', '0', 'none', api_key=7, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
        F('MemberId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupTargetAssignmentMemberValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ConsumerGroupTargetAssignmentMemberValue': M('coordinator-value', '0', '0+', api_key=7, module='group-coordinator', fields=(
        F('TopicPartitions', '[]TopicPartition', '0+', fields=(
            F('TopicId', 'uuid', '0+'),
            F('Partitions', '[]int32', '0+'),
        )),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupTargetAssignmentMetadataKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ConsumerGroupTargetAssignmentMetadataKey': M('coordinator-key', '0', 'none', api_key=6, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupTargetAssignmentMetadataValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ConsumerGroupTargetAssignmentMetadataValue': M('coordinator-value', '0', '0+', api_key=6, module='group-coordinator', fields=(
        F('AssignmentEpoch', 'int32', '0+'),
        F('AssignmentTimestamp', 'int64', '0+', tagged='0+', tag=0, default=0),
    )),
    # clients/src/main/resources/common/message/ConsumerProtocolAssignment.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ConsumerProtocolAssignment': M('data', '0-3', 'none', module='clients', fields=(
        F('AssignedPartitions', '[]TopicPartition', '0+', fields=(
            F('Topic', 'string', '0+'),
            F('Partitions', '[]int32', '0+'),
        )),
        F('UserData', 'bytes', '0+', nullable='0+', default=None),
    )),
    # clients/src/main/resources/common/message/ConsumerProtocolSubscription.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ConsumerProtocolSubscription': M('data', '0-3', 'none', module='clients', fields=(
        F('Topics', '[]string', '0+'),
        F('UserData', 'bytes', '0+', nullable='0+', default=None),
        F('OwnedPartitions', '[]TopicPartition', '1+', fields=(
            F('Topic', 'string', '1+'),
            F('Partitions', '[]int32', '1+'),
        )),
        F('GenerationId', 'int32', '2+', default=-1),
        F('RackId', 'string', '3+', nullable='3+', default=None),
    )),
    # metadata/src/main/resources/common/metadata/DelegationTokenRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'DelegationTokenRecord': M('metadata', '0', '0+', api_key=10, module='metadata', fields=(
        F('Owner', 'string', '0+'),
        F('Requester', 'string', '0+'),
        F('Renewers', '[]string', '0+'),
        F('IssueTimestamp', 'int64', '0+'),
        F('MaxTimestamp', 'int64', '0+'),
        F('ExpirationTimestamp', 'int64', '0+'),
        F('TokenId', 'string', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/EndTransactionRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'EndTransactionRecord': M('metadata', '0', '0+', api_key=24, module='metadata', fields=(
    )),
    # metadata/src/main/resources/common/metadata/FeatureLevelRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'FeatureLevelRecord': M('metadata', '0', '0+', api_key=12, module='metadata', fields=(
        F('Name', 'string', '0+'),
        F('FeatureLevel', 'int16', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/FenceBrokerRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'FenceBrokerRecord': M('metadata', '0', '0+', api_key=7, module='metadata', fields=(
        F('Id', 'int32', '0+'),
        F('Epoch', 'int64', '0+'),
    )),
    # group-coordinator/src/main/resources/common/message/GroupMetadataKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'GroupMetadataKey': M('coordinator-key', '0', 'none', api_key=2, module='group-coordinator', fields=(
        F('group', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/GroupMetadataValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'GroupMetadataValue': M('coordinator-value', '0-4', '4+', api_key=2, module='group-coordinator', fields=(
        F('protocolType', 'string', '0+'),
        F('generation', 'int32', '0+'),
        F('protocol', 'string', '0+', nullable='0+'),
        F('leader', 'string', '0+', nullable='0+'),
        F('currentStateTimestamp', 'int64', '2+', default=-1),
        F('members', '[]MemberMetadata', '0+', fields=(
            F('memberId', 'string', '0+'),
            F('groupInstanceId', 'string', '3+', nullable='3+', default=None),
            F('clientId', 'string', '0+'),
            F('clientHost', 'string', '0+'),
            F('rebalanceTimeout', 'int32', '1+', default=-1),
            F('sessionTimeout', 'int32', '0+'),
            F('subscription', 'bytes', '0+'),
            F('assignment', 'bytes', '0+'),
        )),
    )),
    # clients/src/main/resources/common/message/KRaftVersionRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'KRaftVersionRecord': M('data', '0', '0+', module='clients', fields=(
        F('Version', 'int16', '0+'),
        F('KRaftVersion', 'int16', '0+'),
    )),
    # clients/src/main/resources/common/message/LeaderChangeMessage.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'LeaderChangeMessage': M('data', '0-1', '0+', module='clients', fields=(
        F('Version', 'int16', '0+'),
        F('LeaderId', 'int32', '0+'),
        F('Voters', '[]Voter', '0+', fields=(
            F('VoterId', 'int32', '0+'),
            F('VoterDirectoryId', 'uuid', '1+'),
        )),
        F('GrantingVoters', '[]Voter', '0+', fields=(
            F('VoterId', 'int32', '0+'),
            F('VoterDirectoryId', 'uuid', '1+'),
        )),
    )),
    # group-coordinator/src/main/resources/common/message/LegacyOffsetCommitKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'LegacyOffsetCommitKey': M('coordinator-key', '0', 'none', api_key=0, module='group-coordinator', fields=(
        F('group', 'string', '0'),
        F('topic', 'string', '0'),
        F('partition', 'int32', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/LegacyOffsetCommitValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'LegacyOffsetCommitValue': M('coordinator-value', '0', 'none', api_key=0, module='group-coordinator', fields=(
        F('offset', 'int64', '0'),
        F('metadata', 'string', '0'),
        F('commitTimestamp', 'int64', '0'),
    )),
    # metadata/src/main/resources/common/metadata/NoOpRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'NoOpRecord': M('metadata', '0', '0+', api_key=20, module='metadata', fields=(
    )),
    # group-coordinator/src/main/resources/common/message/OffsetCommitKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'OffsetCommitKey': M('coordinator-key', '0', 'none', api_key=1, module='group-coordinator', fields=(
        F('group', 'string', '0'),
        F('topic', 'string', '0'),
        F('partition', 'int32', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/OffsetCommitValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'OffsetCommitValue': M('coordinator-value', '0-4', '4+', api_key=1, module='group-coordinator', fields=(
        F('offset', 'int64', '0+'),
        F('leaderEpoch', 'int32', '3+', default=-1),
        F('metadata', 'string', '0+'),
        F('commitTimestamp', 'int64', '0+'),
        F('expireTimestamp', 'int64', '1', default=-1),
        F('topicId', 'uuid', '4+', tagged='4+', tag=0),
    )),
    # metadata/src/main/resources/common/metadata/PartitionChangeRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'PartitionChangeRecord': M('metadata', '0-2', '0+', api_key=5, module='metadata', fields=(
        F('PartitionId', 'int32', '0+', default=-1),
        F('TopicId', 'uuid', '0+'),
        F('Isr', '[]int32', '0+', nullable='0+', tagged='0+', tag=0, default=None),
        F('Leader', 'int32', '0+', tagged='0+', tag=1, default=-2),
        F('Replicas', '[]int32', '0+', nullable='0+', tagged='0+', tag=2, default=None),
        F('RemovingReplicas', '[]int32', '0+', nullable='0+', tagged='0+', tag=3, default=None),
        F('AddingReplicas', '[]int32', '0+', nullable='0+', tagged='0+', tag=4, default=None),
        F('LeaderRecoveryState', 'int8', '0+', tagged='0+', tag=5, default=-1),
        F('Directories', '[]uuid', '1+', nullable='1+', tagged='1+', tag=8, default=None),
        F('EligibleLeaderReplicas', '[]int32', '2+', nullable='2+', tagged='2+', tag=6, default=None),
        F('LastKnownElr', '[]int32', '2+', nullable='2+', tagged='2+', tag=7, default=None),
    )),
    # metadata/src/main/resources/common/metadata/PartitionRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'PartitionRecord': M('metadata', '0-2', '0+', api_key=3, module='metadata', fields=(
        F('PartitionId', 'int32', '0+', default=-1),
        F('TopicId', 'uuid', '0+'),
        F('Replicas', '[]int32', '0+'),
        F('Isr', '[]int32', '0+'),
        F('RemovingReplicas', '[]int32', '0+'),
        F('AddingReplicas', '[]int32', '0+'),
        F('Leader', 'int32', '0+', default=-1),
        F('LeaderRecoveryState', 'int8', '0+', tagged='0+', tag=0, default=0),
        F('LeaderEpoch', 'int32', '0+', default=-1),
        F('PartitionEpoch', 'int32', '0+', default=-1),
        F('Directories', '[]uuid', '1+'),
        F('EligibleLeaderReplicas', '[]int32', '2+', nullable='2+', tagged='2+', tag=1, default=None),
        F('LastKnownElr', '[]int32', '2+', nullable='2+', tagged='2+', tag=2, default=None),
    )),
    # metadata/src/main/resources/common/metadata/ProducerIdsRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ProducerIdsRecord': M('metadata', '0', '0+', api_key=15, module='metadata', fields=(
        F('BrokerId', 'int32', '0+'),
        F('BrokerEpoch', 'int64', '0+', default=-1),
        F('NextProducerId', 'int64', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/RegisterBrokerRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'RegisterBrokerRecord': M('metadata', '0-4', '0+', api_key=0, module='metadata', fields=(
        F('BrokerId', 'int32', '0+'),
        F('IsMigratingZkBroker', 'bool', '2+', default=False),
        F('IncarnationId', 'uuid', '0+'),
        F('BrokerEpoch', 'int64', '0+'),
        F('EndPoints', '[]BrokerEndpoint', '0+', fields=(
            F('Name', 'string', '0+'),
            F('Host', 'string', '0+'),
            F('Port', 'uint16', '0+'),
            F('SecurityProtocol', 'int16', '0+'),
        )),
        F('Features', '[]BrokerFeature', '0+', fields=(
            F('Name', 'string', '0+'),
            F('MinSupportedVersion', 'int16', '0+'),
            F('MaxSupportedVersion', 'int16', '0+'),
        )),
        F('Rack', 'string', '0+', nullable='0+'),
        F('Fenced', 'bool', '0+', default=True),
        F('InControlledShutdown', 'bool', '1+', default=False),
        F('LogDirs', '[]uuid', '3+', tagged='3+', tag=0),
        F('CordonedLogDirs', '[]uuid', '4+', nullable='4+', tagged='4+', tag=1, default=None),
    )),
    # metadata/src/main/resources/common/metadata/RegisterControllerRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'RegisterControllerRecord': M('metadata', '0', '0+', api_key=27, module='metadata', fields=(
        F('ControllerId', 'int32', '0+'),
        F('IncarnationId', 'uuid', '0+'),
        F('ZkMigrationReady', 'bool', '0+'),
        F('EndPoints', '[]ControllerEndpoint', '0+', fields=(
            F('Name', 'string', '0+'),
            F('Host', 'string', '0+'),
            F('Port', 'uint16', '0+'),
            F('SecurityProtocol', 'int16', '0+'),
        )),
        F('Features', '[]ControllerFeature', '0+', fields=(
            F('Name', 'string', '0+'),
            F('MinSupportedVersion', 'int16', '0+'),
            F('MaxSupportedVersion', 'int16', '0+'),
        )),
    )),
    # storage/src/main/resources/message/RemoteLogSegmentMetadataRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'RemoteLogSegmentMetadataRecord': M('metadata', '0', '0+', api_key=0, module='storage', fields=(
        F('RemoteLogSegmentId', 'RemoteLogSegmentIdEntry', '0+', fields=(
            F('TopicIdPartition', 'TopicIdPartitionEntry', '0+', fields=(
                F('Name', 'string', '0+'),
                F('Id', 'uuid', '0+'),
                F('Partition', 'int32', '0+'),
            )),
            F('Id', 'uuid', '0+'),
        )),
        F('StartOffset', 'int64', '0+'),
        F('EndOffset', 'int64', '0+'),
        F('BrokerId', 'int32', '0+'),
        F('MaxTimestampMs', 'int64', '0+'),
        F('EventTimestampMs', 'int64', '0+'),
        F('SegmentLeaderEpochs', '[]SegmentLeaderEpochEntry', '0+', fields=(
            F('LeaderEpoch', 'int32', '0+'),
            F('Offset', 'int64', '0+'),
        )),
        F('SegmentSizeInBytes', 'int32', '0+'),
        F('CustomMetadata', 'bytes', '0+', nullable='0+', default=None),
        F('RemoteLogSegmentState', 'int8', '0+'),
        F('TxnIndexEmpty', 'bool', '0+', tagged='0+', tag=0),
    )),
    # storage/src/main/resources/message/RemoteLogSegmentMetadataSnapshotRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'RemoteLogSegmentMetadataSnapshotRecord': M('metadata', '0', '0+', api_key=3, module='storage', fields=(
        F('SegmentId', 'uuid', '0+'),
        F('StartOffset', 'int64', '0+'),
        F('EndOffset', 'int64', '0+'),
        F('BrokerId', 'int32', '0+'),
        F('MaxTimestampMs', 'int64', '0+'),
        F('EventTimestampMs', 'int64', '0+'),
        F('SegmentLeaderEpochs', '[]SegmentLeaderEpochEntry', '0+', fields=(
            F('LeaderEpoch', 'int32', '0+'),
            F('Offset', 'int64', '0+'),
        )),
        F('SegmentSizeInBytes', 'int32', '0+'),
        F('CustomMetadata', 'bytes', '0+', nullable='0+', default=None),
        F('RemoteLogSegmentState', 'int8', '0+'),
        F('TxnIndexEmpty', 'bool', '0+', tagged='0+', tag=0),
    )),
    # storage/src/main/resources/message/RemoteLogSegmentMetadataUpdateRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'RemoteLogSegmentMetadataUpdateRecord': M('metadata', '0', '0+', api_key=1, module='storage', fields=(
        F('RemoteLogSegmentId', 'RemoteLogSegmentIdEntry', '0+', fields=(
            F('TopicIdPartition', 'TopicIdPartitionEntry', '0+', fields=(
                F('Name', 'string', '0+'),
                F('Id', 'uuid', '0+'),
                F('Partition', 'int32', '0+'),
            )),
            F('Id', 'uuid', '0+'),
        )),
        F('BrokerId', 'int32', '0+'),
        F('EventTimestampMs', 'int64', '0+'),
        F('CustomMetadata', 'bytes', '0+', nullable='0+', default=None),
        F('RemoteLogSegmentState', 'int8', '0+'),
    )),
    # storage/src/main/resources/message/RemotePartitionDeleteMetadataRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'RemotePartitionDeleteMetadataRecord': M('metadata', '0', '0+', api_key=2, module='storage', fields=(
        F('TopicIdPartition', 'TopicIdPartitionEntry', '0+', fields=(
            F('Name', 'string', '0+'),
            F('Id', 'uuid', '0+'),
            F('Partition', 'int32', '0+'),
        )),
        F('BrokerId', 'int32', '0+'),
        F('EventTimestampMs', 'int64', '0+'),
        F('RemotePartitionDeleteState', 'int8', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/RemoveAccessControlEntryRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'RemoveAccessControlEntryRecord': M('metadata', '0', '0+', api_key=19, module='metadata', fields=(
        F('Id', 'uuid', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/RemoveDelegationTokenRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'RemoveDelegationTokenRecord': M('metadata', '0', '0+', api_key=26, module='metadata', fields=(
        F('TokenId', 'string', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/RemoveTopicRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'RemoveTopicRecord': M('metadata', '0', '0+', api_key=9, module='metadata', fields=(
        F('TopicId', 'uuid', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/RemoveUserScramCredentialRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'RemoveUserScramCredentialRecord': M('metadata', '0', '0+', api_key=22, module='metadata', fields=(
        F('Name', 'string', '0+'),
        F('Mechanism', 'int8', '0+'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupCurrentMemberAssignmentKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ShareGroupCurrentMemberAssignmentKey': M('coordinator-key', '0', 'none', api_key=14, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
        F('MemberId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupCurrentMemberAssignmentValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ShareGroupCurrentMemberAssignmentValue': M('coordinator-value', '0', '0+', api_key=14, module='group-coordinator', fields=(
        F('MemberEpoch', 'int32', '0+'),
        F('PreviousMemberEpoch', 'int32', '0+'),
        F('State', 'int8', '0+'),
        F('AssignedPartitions', '[]TopicPartitions', '0+', fields=(
            F('TopicId', 'uuid', '0+'),
            F('Partitions', '[]int32', '0+'),
        )),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupMemberMetadataKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ShareGroupMemberMetadataKey': M('coordinator-key', '0', 'none', api_key=10, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
        F('MemberId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupMemberMetadataValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ShareGroupMemberMetadataValue': M('coordinator-value', '0', '0+', api_key=10, module='group-coordinator', fields=(
        F('RackId', 'string', '0+', nullable='0+'),
        F('ClientId', 'string', '0+'),
        F('ClientHost', 'string', '0+'),
        F('SubscribedTopicNames', '[]string', '0+'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupMetadataKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ShareGroupMetadataKey': M('coordinator-key', '0', 'none', api_key=11, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupMetadataValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ShareGroupMetadataValue': M('coordinator-value', '0', '0+', api_key=11, module='group-coordinator', fields=(
        F('Epoch', 'int32', '0+'),
        F('MetadataHash', 'int64', '0+'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupPartitionMetadataKey.json @ 82ea9d0fcef9, 4.1.0-SNAPSHOT (trunk; released in 4.0)
    'ShareGroupPartitionMetadataKey': M('coordinator-key', '0', 'none', api_key=9, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupPartitionMetadataValue.json @ 82ea9d0fcef9, 4.1.0-SNAPSHOT (trunk; released in 4.0)
    'ShareGroupPartitionMetadataValue': M('coordinator-value', '0', '0+', api_key=9, module='group-coordinator', fields=(
        F('Topics', '[]TopicMetadata', '0+', fields=(
            F('TopicId', 'uuid', '0+'),
            F('TopicName', 'string', '0+'),
            F('NumPartitions', 'int32', '0+'),
            F('PartitionMetadata', '[]PartitionMetadata', '0+', fields=(
                F('Partition', 'int32', '0+'),
                F('Racks', '[]string', '0+'),
            )),
        )),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupStatePartitionMetadataKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ShareGroupStatePartitionMetadataKey': M('coordinator-key', '0', 'none', api_key=15, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupStatePartitionMetadataValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ShareGroupStatePartitionMetadataValue': M('coordinator-value', '0', '0+', api_key=15, module='group-coordinator', fields=(
        F('InitializingTopics', '[]TopicPartitionsInfo', '0+', fields=(
            F('TopicId', 'uuid', '0+'),
            F('TopicName', 'string', '0+'),
            F('Partitions', '[]int32', '0+'),
        )),
        F('InitializedTopics', '[]TopicPartitionsInfo', '0+', fields=(
            F('TopicId', 'uuid', '0+'),
            F('TopicName', 'string', '0+'),
            F('Partitions', '[]int32', '0+'),
        )),
        F('DeletingTopics', '[]TopicInfo', '0+', fields=(
            F('TopicId', 'uuid', '0+'),
            F('TopicName', 'string', '0+'),
        )),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupTargetAssignmentMemberKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ShareGroupTargetAssignmentMemberKey': M('coordinator-key', '0', 'none', api_key=13, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
        F('MemberId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupTargetAssignmentMemberValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ShareGroupTargetAssignmentMemberValue': M('coordinator-value', '0', '0+', api_key=13, module='group-coordinator', fields=(
        F('TopicPartitions', '[]TopicPartition', '0+', fields=(
            F('TopicId', 'uuid', '0+'),
            F('Partitions', '[]int32', '0+'),
        )),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupTargetAssignmentMetadataKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ShareGroupTargetAssignmentMetadataKey': M('coordinator-key', '0', 'none', api_key=12, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupTargetAssignmentMetadataValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ShareGroupTargetAssignmentMetadataValue': M('coordinator-value', '0', '0+', api_key=12, module='group-coordinator', fields=(
        F('AssignmentEpoch', 'int32', '0+'),
        F('AssignmentTimestamp', 'int64', '0+', tagged='0+', tag=0, default=0),
    )),
    # share-coordinator/src/main/resources/common/message/ShareSnapshotKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ShareSnapshotKey': M('coordinator-key', '0', 'none', api_key=0, module='share-coordinator', fields=(
        F('GroupId', 'string', '0'),
        F('TopicId', 'uuid', '0'),
        F('Partition', 'int32', '0'),
    )),
    # share-coordinator/src/main/resources/common/message/ShareSnapshotValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ShareSnapshotValue': M('coordinator-value', '0', '0+', api_key=0, module='share-coordinator', fields=(
        F('SnapshotEpoch', 'int32', '0+'),
        F('StateEpoch', 'int32', '0+'),
        F('LeaderEpoch', 'int32', '0+'),
        F('StartOffset', 'int64', '0+'),
        F('DeliveryCompleteCount', 'int32', '0+', tagged='0+', tag=0, default=-1),
        F('CreateTimestamp', 'int64', '0+'),
        F('WriteTimestamp', 'int64', '0+'),
        F('StateBatches', '[]StateBatch', '0+', fields=(
            F('FirstOffset', 'int64', '0+'),
            F('LastOffset', 'int64', '0+'),
            F('DeliveryState', 'int8', '0+'),
            F('DeliveryCount', 'int16', '0+'),
        )),
    )),
    # share-coordinator/src/main/resources/common/message/ShareUpdateKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ShareUpdateKey': M('coordinator-key', '0', 'none', api_key=1, module='share-coordinator', fields=(
        F('GroupId', 'string', '0'),
        F('TopicId', 'uuid', '0'),
        F('Partition', 'int32', '0'),
    )),
    # share-coordinator/src/main/resources/common/message/ShareUpdateValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ShareUpdateValue': M('coordinator-value', '0', '0+', api_key=1, module='share-coordinator', fields=(
        F('SnapshotEpoch', 'int32', '0+'),
        F('LeaderEpoch', 'int32', '0+'),
        F('StartOffset', 'int64', '0+'),
        F('DeliveryCompleteCount', 'int32', '0+', tagged='0+', tag=0, default=-1),
        F('StateBatches', '[]StateBatch', '0+', fields=(
            F('FirstOffset', 'int64', '0+'),
            F('LastOffset', 'int64', '0+'),
            F('DeliveryState', 'int8', '0+'),
            F('DeliveryCount', 'int16', '0+'),
        )),
    )),
    # clients/src/main/resources/common/message/SnapshotFooterRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'SnapshotFooterRecord': M('data', '0', '0+', module='clients', fields=(
        F('Version', 'int16', '0+'),
    )),
    # clients/src/main/resources/common/message/SnapshotHeaderRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'SnapshotHeaderRecord': M('data', '0', '0+', module='clients', fields=(
        F('Version', 'int16', '0+'),
        F('LastContainedLogTimestamp', 'int64', '0+'),
    )),
    # group-coordinator/src/main/resources/common/message/StreamsGroupCurrentMemberAssignmentKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'StreamsGroupCurrentMemberAssignmentKey': M('coordinator-key', '0', 'none', api_key=22, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
        F('MemberId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/StreamsGroupCurrentMemberAssignmentValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'StreamsGroupCurrentMemberAssignmentValue': M('coordinator-value', '0', '0+', api_key=22, module='group-coordinator', fields=(
        F('MemberEpoch', 'int32', '0+'),
        F('PreviousMemberEpoch', 'int32', '0+'),
        F('State', 'int8', '0+'),
        F('ActiveTasks', '[]TaskIds', '0+', fields=(
            F('SubtopologyId', 'string', '0+'),
            F('Partitions', '[]int32', '0+'),
            F('AssignmentEpochs', '[]int32', '0+', nullable='0+', tagged='0+', tag=0),
        )),
        F('StandbyTasks', '[]TaskIds', '0+', fields=(
            F('SubtopologyId', 'string', '0+'),
            F('Partitions', '[]int32', '0+'),
            F('AssignmentEpochs', '[]int32', '0+', nullable='0+', tagged='0+', tag=0),
        )),
        F('WarmupTasks', '[]TaskIds', '0+', fields=(
            F('SubtopologyId', 'string', '0+'),
            F('Partitions', '[]int32', '0+'),
            F('AssignmentEpochs', '[]int32', '0+', nullable='0+', tagged='0+', tag=0),
        )),
        F('ActiveTasksPendingRevocation', '[]TaskIds', '0+', fields=(
            F('SubtopologyId', 'string', '0+'),
            F('Partitions', '[]int32', '0+'),
            F('AssignmentEpochs', '[]int32', '0+', nullable='0+', tagged='0+', tag=0),
        )),
        F('StandbyTasksPendingRevocation', '[]TaskIds', '0+', fields=(
            F('SubtopologyId', 'string', '0+'),
            F('Partitions', '[]int32', '0+'),
            F('AssignmentEpochs', '[]int32', '0+', nullable='0+', tagged='0+', tag=0),
        )),
        F('WarmupTasksPendingRevocation', '[]TaskIds', '0+', fields=(
            F('SubtopologyId', 'string', '0+'),
            F('Partitions', '[]int32', '0+'),
            F('AssignmentEpochs', '[]int32', '0+', nullable='0+', tagged='0+', tag=0),
        )),
    )),
    # group-coordinator/src/main/resources/common/message/StreamsGroupMemberMetadataKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'StreamsGroupMemberMetadataKey': M('coordinator-key', '0', 'none', api_key=19, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
        F('MemberId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/StreamsGroupMemberMetadataValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'StreamsGroupMemberMetadataValue': M('coordinator-value', '0', '0+', api_key=19, module='group-coordinator', fields=(
        F('InstanceId', 'string', '0+', nullable='0+'),
        F('RackId', 'string', '0+', nullable='0+'),
        F('ClientId', 'string', '0+'),
        F('ClientHost', 'string', '0+'),
        F('RebalanceTimeoutMs', 'int32', '0+', default=-1),
        F('TopologyEpoch', 'int32', '0+'),
        F('ProcessId', 'string', '0+'),
        F('UserEndpoint', 'Endpoint', '0+', nullable='0+', default=None, fields=(
            F('Host', 'string', '0+'),
            F('Port', 'uint16', '0+'),
        )),
        F('ClientTags', '[]KeyValue', '0+', fields=(
            F('Key', 'string', '0+'),
            F('Value', 'string', '0+'),
        )),
    )),
    # group-coordinator/src/main/resources/common/message/StreamsGroupMetadataKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'StreamsGroupMetadataKey': M('coordinator-key', '0', 'none', api_key=17, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/StreamsGroupMetadataValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'StreamsGroupMetadataValue': M('coordinator-value', '0', '0+', api_key=17, module='group-coordinator', fields=(
        F('Epoch', 'int32', '0+'),
        F('MetadataHash', 'int64', '0+'),
        F('ValidatedTopologyEpoch', 'int32', '0+', tagged='0+', tag=0, default=-1),
        F('LastAssignmentConfigs', '[]LastAssignmentConfig', '0+', nullable='0+', tagged='0+', tag=1, fields=(
            F('Key', 'string', '0+'),
            F('Value', 'string', '0+'),
        )),
        F('StoredDescriptionTopologyEpoch', 'int32', '0+', tagged='0+', tag=2, default=-1),
        F('FailedDescriptionTopologyEpoch', 'int32', '0+', tagged='0+', tag=3, default=-1),
    )),
    # group-coordinator/src/main/resources/common/message/StreamsGroupPartitionMetadataKey.json @ df93571f5030, 4.1.0-SNAPSHOT (trunk, never released)
    'StreamsGroupPartitionMetadataKey': M('coordinator-key', '0', 'none', api_key=18, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/StreamsGroupPartitionMetadataValue.json @ df93571f5030, 4.1.0-SNAPSHOT (trunk, never released)
    'StreamsGroupPartitionMetadataValue': M('coordinator-value', '0', '0+', api_key=18, module='group-coordinator', fields=(
        F('Topics', '[]TopicMetadata', '0+', fields=(
            F('TopicId', 'uuid', '0+'),
            F('TopicName', 'string', '0+'),
            F('NumPartitions', 'int32', '0+'),
        )),
    )),
    # group-coordinator/src/main/resources/common/message/StreamsGroupTargetAssignmentMemberKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'StreamsGroupTargetAssignmentMemberKey': M('coordinator-key', '0', 'none', api_key=21, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
        F('MemberId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/StreamsGroupTargetAssignmentMemberValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'StreamsGroupTargetAssignmentMemberValue': M('coordinator-value', '0', '0+', api_key=21, module='group-coordinator', fields=(
        F('ActiveTasks', '[]TaskIds', '0+', fields=(
            F('SubtopologyId', 'string', '0+'),
            F('Partitions', '[]int32', '0+'),
        )),
        F('StandbyTasks', '[]TaskIds', '0+', fields=(
            F('SubtopologyId', 'string', '0+'),
            F('Partitions', '[]int32', '0+'),
        )),
        F('WarmupTasks', '[]TaskIds', '0+', fields=(
            F('SubtopologyId', 'string', '0+'),
            F('Partitions', '[]int32', '0+'),
        )),
    )),
    # group-coordinator/src/main/resources/common/message/StreamsGroupTargetAssignmentMetadataKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'StreamsGroupTargetAssignmentMetadataKey': M('coordinator-key', '0', 'none', api_key=20, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/StreamsGroupTargetAssignmentMetadataValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'StreamsGroupTargetAssignmentMetadataValue': M('coordinator-value', '0', '0+', api_key=20, module='group-coordinator', fields=(
        F('AssignmentEpoch', 'int32', '0+'),
        F('AssignmentTimestamp', 'int64', '0+', tagged='0+', tag=0, default=0),
    )),
    # group-coordinator/src/main/resources/common/message/StreamsGroupTopologyKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'StreamsGroupTopologyKey': M('coordinator-key', '0', 'none', api_key=23, module='group-coordinator', fields=(
        F('GroupId', 'string', '0'),
    )),
    # group-coordinator/src/main/resources/common/message/StreamsGroupTopologyValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'StreamsGroupTopologyValue': M('coordinator-value', '0', '0+', api_key=23, module='group-coordinator', fields=(
        F('Epoch', 'int32', '0+'),
        F('Subtopologies', '[]Subtopology', '0+', fields=(
            F('SubtopologyId', 'string', '0+'),
            F('SourceTopics', '[]string', '0+'),
            F('SourceTopicRegex', '[]string', '0+'),
            F('StateChangelogTopics', '[]TopicInfo', '0+', fields=(
                F('Name', 'string', '0+'),
                F('Partitions', 'int32', '0+'),
                F('ReplicationFactor', 'int16', '0+'),
                F('TopicConfigs', '[]TopicConfig', '0+', fields=(
                    F('key', 'string', '0+'),
                    F('value', 'string', '0+'),
                )),
            )),
            F('RepartitionSinkTopics', '[]string', '0+'),
            F('RepartitionSourceTopics', '[]TopicInfo', '0+', fields=(
                F('Name', 'string', '0+'),
                F('Partitions', 'int32', '0+'),
                F('ReplicationFactor', 'int16', '0+'),
                F('TopicConfigs', '[]TopicConfig', '0+', fields=(
                    F('key', 'string', '0+'),
                    F('value', 'string', '0+'),
                )),
            )),
            F('CopartitionGroups', '[]CopartitionGroup', '0+', fields=(
                F('SourceTopics', '[]int16', '0+'),
                F('SourceTopicRegex', '[]int16', '0+'),
                F('RepartitionSourceTopics', '[]int16', '0+'),
            )),
        )),
    )),
    # metadata/src/main/resources/common/metadata/TopicRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'TopicRecord': M('metadata', '0', '0+', api_key=2, module='metadata', fields=(
        F('Name', 'string', '0+'),
        F('TopicId', 'uuid', '0+'),
    )),
    # transaction-coordinator/src/main/resources/common/message/TransactionLogKey.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'TransactionLogKey': M('coordinator-key', '0', 'none', api_key=0, module='transaction-coordinator', fields=(
        F('TransactionalId', 'string', '0'),
    )),
    # transaction-coordinator/src/main/resources/common/message/TransactionLogValue.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'TransactionLogValue': M('coordinator-value', '0-1', '1+', api_key=0, module='transaction-coordinator', fields=(
        F('ProducerId', 'int64', '0+'),
        F('PreviousProducerId', 'int64', '1+', tagged='1+', tag=0, default=-1),
        F('NextProducerId', 'int64', '1+', tagged='1+', tag=1, default=-1),
        F('ProducerEpoch', 'int16', '0+'),
        F('NextProducerEpoch', 'int16', '1+', tagged='1+', tag=3, default=-1),
        F('TransactionTimeoutMs', 'int32', '0+'),
        F('TransactionStatus', 'int8', '0+'),
        F('TransactionPartitions', '[]PartitionsSchema', '0+', nullable='0+', fields=(
            F('Topic', 'string', '0+'),
            F('PartitionIds', '[]int32', '0+'),
        )),
        F('TransactionLastUpdateTimestampMs', 'int64', '0+'),
        F('TransactionStartTimestampMs', 'int64', '0+'),
        F('ClientTransactionVersion', 'int16', '1+', tagged='1+', tag=2, default=0),
    )),
    # metadata/src/main/resources/common/metadata/UnfenceBrokerRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'UnfenceBrokerRecord': M('metadata', '0', '0+', api_key=8, module='metadata', fields=(
        F('Id', 'int32', '0+'),
        F('Epoch', 'int64', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/UnregisterBrokerRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'UnregisterBrokerRecord': M('metadata', '0', '0+', api_key=1, module='metadata', fields=(
        F('BrokerId', 'int32', '0+'),
        F('BrokerEpoch', 'int64', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/UnregisterControllerRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'UnregisterControllerRecord': M('metadata', '0', '0+', api_key=29, module='metadata', fields=(
        F('ControllerId', 'int32', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/UserScramCredentialRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'UserScramCredentialRecord': M('metadata', '0', '0+', api_key=11, module='metadata', fields=(
        F('Name', 'string', '0+'),
        F('Mechanism', 'int8', '0+'),
        F('Salt', 'bytes', '0+'),
        F('StoredKey', 'bytes', '0+'),
        F('ServerKey', 'bytes', '0+'),
        F('Iterations', 'int32', '0+'),
    )),
    # clients/src/main/resources/common/message/VotersRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'VotersRecord': M('data', '0', '0+', module='clients', fields=(
        F('Version', 'int16', '0+'),
        F('Voters', '[]Voter', '0+', fields=(
            F('VoterId', 'int32', '0+'),
            F('VoterDirectoryId', 'uuid', '0+'),
            F('Endpoints', '[]Endpoint', '0+', fields=(
                F('Name', 'string', '0+'),
                F('Host', 'string', '0+'),
                F('Port', 'uint16', '0+'),
            )),
            F('KRaftVersionFeature', 'KRaftVersionFeature', '0+', fields=(
                F('MinSupportedVersion', 'int16', '0+'),
                F('MaxSupportedVersion', 'int16', '0+'),
            )),
        )),
    )),
    # metadata/src/main/resources/common/metadata/ZkMigrationRecord.json @ d79bd502ec7f, 4.5.0-SNAPSHOT
    'ZkMigrationStateRecord': M('metadata', '0', '0+', api_key=21, module='metadata', fields=(
        F('ZkMigrationState', 'int8', '0+'),
    )),
}
