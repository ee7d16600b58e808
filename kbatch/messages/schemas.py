"""Kafka's message schemas, as kbatch needs them to read internal topics and control records.

WRITTEN BY ``python -m kbatch.messages.make_table`` from Apache Kafka's JSON message definitions (the file
above each entry; copies in ``fixtures/kafka-messages``).  Do not edit by hand.

    M(kind, validVersions, flexibleVersions, fields, api_key)   one message
    F(name, type, versions, nullable, tagged, tag, default, flexible, fields)   one field

Versions are Kafka's strings ("0+", "1-3", "2", "none"); ``fields`` of a struct or struct array are given
inline (Kafka's commonStructs resolved).  :mod:`kbatch.messages.decoder` reads bytes with this table.
"""

from .spec import F, M

SCHEMAS = {
    # metadata/src/main/resources/common/metadata/AbortTransactionRecord.json
    'AbortTransactionRecord': M('metadata', '0', '0+', api_key=25, fields=(
        F('Reason', 'string', '0+', nullable='0+', tagged='0+', tag=0, default=None),
    )),
    # metadata/src/main/resources/common/metadata/AccessControlEntryRecord.json
    'AccessControlEntryRecord': M('metadata', '0', '0+', api_key=18, fields=(
        F('Id', 'uuid', '0+'),
        F('ResourceType', 'int8', '0+'),
        F('ResourceName', 'string', '0+'),
        F('PatternType', 'int8', '0+'),
        F('Principal', 'string', '0+'),
        F('Host', 'string', '0+'),
        F('Operation', 'int8', '0+'),
        F('PermissionType', 'int8', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/BeginTransactionRecord.json
    'BeginTransactionRecord': M('metadata', '0', '0+', api_key=23, fields=(
        F('Name', 'string', '0+', nullable='0+', tagged='0+', tag=0, default=None),
    )),
    # metadata/src/main/resources/common/metadata/BrokerRegistrationChangeRecord.json
    'BrokerRegistrationChangeRecord': M('metadata', '0-2', '0+', api_key=17, fields=(
        F('BrokerId', 'int32', '0+'),
        F('BrokerEpoch', 'int64', '0+'),
        F('Fenced', 'int8', '0+', tagged='0+', tag=0),
        F('InControlledShutdown', 'int8', '1+', tagged='1+', tag=1),
        F('LogDirs', '[]uuid', '2+', tagged='2+', tag=2),
    )),
    # metadata/src/main/resources/common/metadata/ClientQuotaRecord.json
    'ClientQuotaRecord': M('metadata', '0', '0+', api_key=14, fields=(
        F('Entity', '[]EntityData', '0+', fields=(
            F('EntityType', 'string', '0+'),
            F('EntityName', 'string', '0+', nullable='0+'),
        )),
        F('Key', 'string', '0+'),
        F('Value', 'float64', '0+'),
        F('Remove', 'bool', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/ConfigRecord.json
    'ConfigRecord': M('metadata', '0', '0+', api_key=4, fields=(
        F('ResourceType', 'int8', '0+'),
        F('ResourceName', 'string', '0+'),
        F('Name', 'string', '0+'),
        F('Value', 'string', '0+', nullable='0+'),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupCurrentMemberAssignmentKey.json
    'ConsumerGroupCurrentMemberAssignmentKey': M('data', '8', 'none', fields=(
        F('GroupId', 'string', '8'),
        F('MemberId', 'string', '8'),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupCurrentMemberAssignmentValue.json
    'ConsumerGroupCurrentMemberAssignmentValue': M('data', '0', '0+', fields=(
        F('MemberEpoch', 'int32', '0+'),
        F('PreviousMemberEpoch', 'int32', '0+'),
        F('State', 'int8', '0+'),
        F('AssignedPartitions', '[]TopicPartitions', '0+', fields=(
            F('TopicId', 'uuid', '0+'),
            F('Partitions', '[]int32', '0+'),
        )),
        F('PartitionsPendingRevocation', '[]TopicPartitions', '0+', fields=(
            F('TopicId', 'uuid', '0+'),
            F('Partitions', '[]int32', '0+'),
        )),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupMemberMetadataKey.json
    'ConsumerGroupMemberMetadataKey': M('data', '5', 'none', fields=(
        F('GroupId', 'string', '5'),
        F('MemberId', 'string', '5'),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupMemberMetadataValue.json
    'ConsumerGroupMemberMetadataValue': M('data', '0', '0+', fields=(
        F('InstanceId', 'string', '0+', nullable='0+'),
        F('RackId', 'string', '0+', nullable='0+'),
        F('ClientId', 'string', '0+'),
        F('ClientHost', 'string', '0+'),
        F('SubscribedTopicNames', '[]string', '0+'),
        F('SubscribedTopicRegex', 'string', '0+', nullable='0+'),
        F('RebalanceTimeoutMs', 'int32', '0+', default=-1),
        F('ServerAssignor', 'string', '0+', nullable='0+'),
        F('ClassicMemberMetadata', 'ClassicMemberMetadata', '0+', nullable='0+', tagged='0+', tag=0, default=None, fields=(
            F('SessionTimeoutMs', 'int32', '0+'),
            F('SupportedProtocols', '[]ClassicProtocol', '0+', fields=(
                F('Name', 'string', '0+'),
                F('Metadata', 'bytes', '0+'),
            )),
        )),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupMetadataKey.json
    'ConsumerGroupMetadataKey': M('data', '3', 'none', fields=(
        F('GroupId', 'string', '3'),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupMetadataValue.json
    'ConsumerGroupMetadataValue': M('data', '0', '0+', fields=(
        F('Epoch', 'int32', '0+'),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupPartitionMetadataKey.json
    'ConsumerGroupPartitionMetadataKey': M('data', '4', 'none', fields=(
        F('GroupId', 'string', '4'),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupPartitionMetadataValue.json
    'ConsumerGroupPartitionMetadataValue': M('data', '0', '0+', fields=(
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
    # group-coordinator/src/main/resources/common/message/ConsumerGroupTargetAssignmentMemberKey.json
    'ConsumerGroupTargetAssignmentMemberKey': M('data', '7', 'none', fields=(
        F('GroupId', 'string', '7'),
        F('MemberId', 'string', '7'),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupTargetAssignmentMemberValue.json
    'ConsumerGroupTargetAssignmentMemberValue': M('data', '0', '0+', fields=(
        F('TopicPartitions', '[]TopicPartition', '0+', fields=(
            F('TopicId', 'uuid', '0+'),
            F('Partitions', '[]int32', '0+'),
        )),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupTargetAssignmentMetadataKey.json
    'ConsumerGroupTargetAssignmentMetadataKey': M('data', '6', 'none', fields=(
        F('GroupId', 'string', '6'),
    )),
    # group-coordinator/src/main/resources/common/message/ConsumerGroupTargetAssignmentMetadataValue.json
    'ConsumerGroupTargetAssignmentMetadataValue': M('data', '0', '0+', fields=(
        F('AssignmentEpoch', 'int32', '0+'),
    )),
    # clients/src/main/resources/common/message/ConsumerProtocolAssignment.json
    'ConsumerProtocolAssignment': M('data', '0-3', 'none', fields=(
        F('AssignedPartitions', '[]TopicPartition', '0+', fields=(
            F('Topic', 'string', '0+'),
            F('Partitions', '[]int32', '0+'),
        )),
        F('UserData', 'bytes', '0+', nullable='0+', default=None),
    )),
    # clients/src/main/resources/common/message/ConsumerProtocolSubscription.json
    'ConsumerProtocolSubscription': M('data', '0-3', 'none', fields=(
        F('Topics', '[]string', '0+'),
        F('UserData', 'bytes', '0+', nullable='0+', default=None),
        F('OwnedPartitions', '[]TopicPartition', '1+', fields=(
            F('Topic', 'string', '1+'),
            F('Partitions', '[]int32', '1+'),
        )),
        F('GenerationId', 'int32', '2+', default=-1),
        F('RackId', 'string', '3+', nullable='3+', default=None),
    )),
    # metadata/src/main/resources/common/metadata/DelegationTokenRecord.json
    'DelegationTokenRecord': M('metadata', '0', '0+', api_key=10, fields=(
        F('Owner', 'string', '0+'),
        F('Requester', 'string', '0+'),
        F('Renewers', '[]string', '0+'),
        F('IssueTimestamp', 'int64', '0+'),
        F('MaxTimestamp', 'int64', '0+'),
        F('ExpirationTimestamp', 'int64', '0+'),
        F('TokenId', 'string', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/EndTransactionRecord.json
    'EndTransactionRecord': M('metadata', '0', '0+', api_key=24, fields=(
    )),
    # metadata/src/main/resources/common/metadata/FeatureLevelRecord.json
    'FeatureLevelRecord': M('metadata', '0', '0+', api_key=12, fields=(
        F('Name', 'string', '0+'),
        F('FeatureLevel', 'int16', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/FenceBrokerRecord.json
    'FenceBrokerRecord': M('metadata', '0', '0+', api_key=7, fields=(
        F('Id', 'int32', '0+'),
        F('Epoch', 'int64', '0+'),
    )),
    # group-coordinator/src/main/resources/common/message/GroupMetadataKey.json
    'GroupMetadataKey': M('data', '2', 'none', fields=(
        F('group', 'string', '2'),
    )),
    # group-coordinator/src/main/resources/common/message/GroupMetadataValue.json
    'GroupMetadataValue': M('data', '0-4', '4+', fields=(
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
    # clients/src/main/resources/common/message/KRaftVersionRecord.json
    'KRaftVersionRecord': M('data', '0', '0+', fields=(
        F('Version', 'int16', '0+'),
        F('KRaftVersion', 'int16', '0+'),
    )),
    # clients/src/main/resources/common/message/LeaderChangeMessage.json
    'LeaderChangeMessage': M('data', '0-1', '0+', fields=(
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
    # metadata/src/main/resources/common/metadata/NoOpRecord.json
    'NoOpRecord': M('metadata', '0', '0+', api_key=20, fields=(
    )),
    # group-coordinator/src/main/resources/common/message/OffsetCommitKey.json
    'OffsetCommitKey': M('data', '0-1', 'none', fields=(
        F('group', 'string', '0-1'),
        F('topic', 'string', '0-1'),
        F('partition', 'int32', '0-1'),
    )),
    # group-coordinator/src/main/resources/common/message/OffsetCommitValue.json
    'OffsetCommitValue': M('data', '0-4', '4+', fields=(
        F('offset', 'int64', '0+'),
        F('leaderEpoch', 'int32', '3+', default=-1),
        F('metadata', 'string', '0+'),
        F('commitTimestamp', 'int64', '0+'),
        F('expireTimestamp', 'int64', '1', default=-1),
    )),
    # metadata/src/main/resources/common/metadata/PartitionChangeRecord.json
    'PartitionChangeRecord': M('metadata', '0-2', '0+', api_key=5, fields=(
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
    # metadata/src/main/resources/common/metadata/PartitionRecord.json
    'PartitionRecord': M('metadata', '0-2', '0+', api_key=3, fields=(
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
    # metadata/src/main/resources/common/metadata/ProducerIdsRecord.json
    'ProducerIdsRecord': M('metadata', '0', '0+', api_key=15, fields=(
        F('BrokerId', 'int32', '0+'),
        F('BrokerEpoch', 'int64', '0+', default=-1),
        F('NextProducerId', 'int64', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/RegisterBrokerRecord.json
    'RegisterBrokerRecord': M('metadata', '0-3', '0+', api_key=0, fields=(
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
    )),
    # metadata/src/main/resources/common/metadata/RegisterControllerRecord.json
    'RegisterControllerRecord': M('metadata', '0', '0+', api_key=27, fields=(
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
    # metadata/src/main/resources/common/metadata/RemoveAccessControlEntryRecord.json
    'RemoveAccessControlEntryRecord': M('metadata', '0', '0+', api_key=19, fields=(
        F('Id', 'uuid', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/RemoveDelegationTokenRecord.json
    'RemoveDelegationTokenRecord': M('metadata', '0', '0+', api_key=26, fields=(
        F('TokenId', 'string', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/RemoveTopicRecord.json
    'RemoveTopicRecord': M('metadata', '0', '0+', api_key=9, fields=(
        F('TopicId', 'uuid', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/RemoveUserScramCredentialRecord.json
    'RemoveUserScramCredentialRecord': M('metadata', '0', '0+', api_key=22, fields=(
        F('Name', 'string', '0+'),
        F('Mechanism', 'int8', '0+'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupCurrentMemberAssignmentKey.json
    'ShareGroupCurrentMemberAssignmentKey': M('data', '14', 'none', fields=(
        F('GroupId', 'string', '14'),
        F('MemberId', 'string', '14'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupCurrentMemberAssignmentValue.json
    'ShareGroupCurrentMemberAssignmentValue': M('data', '0', '0+', fields=(
        F('MemberEpoch', 'int32', '0+'),
        F('PreviousMemberEpoch', 'int32', '0+'),
        F('State', 'int8', '0+'),
        F('AssignedPartitions', '[]TopicPartitions', '0+', fields=(
            F('TopicId', 'uuid', '0+'),
            F('Partitions', '[]int32', '0+'),
        )),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupMemberMetadataKey.json
    'ShareGroupMemberMetadataKey': M('data', '10', 'none', fields=(
        F('GroupId', 'string', '10'),
        F('MemberId', 'string', '10'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupMemberMetadataValue.json
    'ShareGroupMemberMetadataValue': M('data', '0', '0+', fields=(
        F('RackId', 'string', '0+', nullable='0+'),
        F('ClientId', 'string', '0+'),
        F('ClientHost', 'string', '0+'),
        F('SubscribedTopicNames', '[]string', '0+'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupMetadataKey.json
    'ShareGroupMetadataKey': M('data', '11', 'none', fields=(
        F('GroupId', 'string', '11'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupMetadataValue.json
    'ShareGroupMetadataValue': M('data', '0', '0+', fields=(
        F('Epoch', 'int32', '0+'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupPartitionMetadataKey.json
    'ShareGroupPartitionMetadataKey': M('data', '9', 'none', fields=(
        F('GroupId', 'string', '9'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupPartitionMetadataValue.json
    'ShareGroupPartitionMetadataValue': M('data', '0', '0+', fields=(
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
    # group-coordinator/src/main/resources/common/message/ShareGroupStatePartitionMetadataKey.json
    'ShareGroupStatePartitionMetadataKey': M('data', '15', 'none', fields=(
        F('GroupId', 'string', '15'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupStatePartitionMetadataValue.json
    'ShareGroupStatePartitionMetadataValue': M('data', '0', '0+', fields=(
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
    # group-coordinator/src/main/resources/common/message/ShareGroupTargetAssignmentMemberKey.json
    'ShareGroupTargetAssignmentMemberKey': M('data', '13', 'none', fields=(
        F('GroupId', 'string', '13'),
        F('MemberId', 'string', '13'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupTargetAssignmentMemberValue.json
    'ShareGroupTargetAssignmentMemberValue': M('data', '0', '0+', fields=(
        F('TopicPartitions', '[]TopicPartition', '0+', fields=(
            F('TopicId', 'uuid', '0+'),
            F('Partitions', '[]int32', '0+'),
        )),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupTargetAssignmentMetadataKey.json
    'ShareGroupTargetAssignmentMetadataKey': M('data', '12', 'none', fields=(
        F('GroupId', 'string', '12'),
    )),
    # group-coordinator/src/main/resources/common/message/ShareGroupTargetAssignmentMetadataValue.json
    'ShareGroupTargetAssignmentMetadataValue': M('data', '0', '0+', fields=(
        F('AssignmentEpoch', 'int32', '0+'),
    )),
    # share-coordinator/src/main/resources/common/message/ShareSnapshotKey.json
    'ShareSnapshotKey': M('data', '0', 'none', fields=(
        F('GroupId', 'string', '0'),
        F('TopicId', 'uuid', '0'),
        F('Partition', 'int32', '0'),
    )),
    # share-coordinator/src/main/resources/common/message/ShareSnapshotValue.json
    'ShareSnapshotValue': M('data', '0', '0+', fields=(
        F('SnapshotEpoch', 'uint16', '0'),
        F('StateEpoch', 'int32', '0+'),
        F('LeaderEpoch', 'int32', '0+'),
        F('StartOffset', 'int64', '0'),
        F('StateBatches', '[]StateBatch', '0', fields=(
            F('FirstOffset', 'int64', '0'),
            F('LastOffset', 'int64', '0'),
            F('DeliveryState', 'int8', '0'),
            F('DeliveryCount', 'int16', '0'),
        )),
    )),
    # share-coordinator/src/main/resources/common/message/ShareUpdateKey.json
    'ShareUpdateKey': M('data', '1', 'none', fields=(
        F('GroupId', 'string', '1'),
        F('TopicId', 'uuid', '1'),
        F('Partition', 'int32', '1'),
    )),
    # share-coordinator/src/main/resources/common/message/ShareUpdateValue.json
    'ShareUpdateValue': M('data', '0', '0+', fields=(
        F('SnapshotEpoch', 'uint16', '0'),
        F('LeaderEpoch', 'int32', '0+'),
        F('StartOffset', 'int64', '0'),
        F('StateBatches', '[]StateBatch', '0', fields=(
            F('FirstOffset', 'int64', '0'),
            F('LastOffset', 'int64', '0'),
            F('DeliveryState', 'int8', '0'),
            F('DeliveryCount', 'int16', '0'),
        )),
    )),
    # clients/src/main/resources/common/message/SnapshotFooterRecord.json
    'SnapshotFooterRecord': M('data', '0', '0+', fields=(
        F('Version', 'int16', '0+'),
    )),
    # clients/src/main/resources/common/message/SnapshotHeaderRecord.json
    'SnapshotHeaderRecord': M('data', '0', '0+', fields=(
        F('Version', 'int16', '0+'),
        F('LastContainedLogTimestamp', 'int64', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/TopicRecord.json
    'TopicRecord': M('metadata', '0', '0+', api_key=2, fields=(
        F('Name', 'string', '0+'),
        F('TopicId', 'uuid', '0+'),
    )),
    # transaction-coordinator/src/main/resources/common/message/TransactionLogKey.json
    'TransactionLogKey': M('data', '0', 'none', fields=(
        F('TransactionalId', 'string', '0'),
    )),
    # transaction-coordinator/src/main/resources/common/message/TransactionLogValue.json
    'TransactionLogValue': M('data', '0-1', '1+', fields=(
        F('ProducerId', 'int64', '0+'),
        F('PreviousProducerId', 'int64', '1+', tagged='1+', tag=0, default=-1),
        F('NextProducerId', 'int64', '1+', tagged='1+', tag=1, default=-1),
        F('ProducerEpoch', 'int16', '0+'),
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
    # metadata/src/main/resources/common/metadata/UnfenceBrokerRecord.json
    'UnfenceBrokerRecord': M('metadata', '0', '0+', api_key=8, fields=(
        F('Id', 'int32', '0+'),
        F('Epoch', 'int64', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/UnregisterBrokerRecord.json
    'UnregisterBrokerRecord': M('metadata', '0', '0+', api_key=1, fields=(
        F('BrokerId', 'int32', '0+'),
        F('BrokerEpoch', 'int64', '0+'),
    )),
    # metadata/src/main/resources/common/metadata/UserScramCredentialRecord.json
    'UserScramCredentialRecord': M('metadata', '0', '0+', api_key=11, fields=(
        F('Name', 'string', '0+'),
        F('Mechanism', 'int8', '0+'),
        F('Salt', 'bytes', '0+'),
        F('StoredKey', 'bytes', '0+'),
        F('ServerKey', 'bytes', '0+'),
        F('Iterations', 'int32', '0+'),
    )),
    # clients/src/main/resources/common/message/VotersRecord.json
    'VotersRecord': M('data', '0', '0+', fields=(
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
    # metadata/src/main/resources/common/metadata/ZkMigrationRecord.json
    'ZkMigrationStateRecord': M('metadata', '0', '0+', api_key=21, fields=(
        F('ZkMigrationState', 'int8', '0+'),
    )),
}
