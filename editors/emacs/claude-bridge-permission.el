;;; claude-bridge-permission.el --- Permission prompts of claude-bridge chats  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The claude-duplex-bridge authors

;; Author: The claude-duplex-bridge authors
;; URL: https://github.com/claude-duplex-bridge/claude-duplex-bridge
;; Keywords: tools, processes

;; This file is not part of GNU Emacs.

;; SPDX-License-Identifier: MIT

;;; Commentary:

;; The permission part of claude-bridge.el.  A permission request of
;; the bridge is answered "defer" at once, and becomes a card in its
;; chat (drawn by the view), never a question that reads the keyboard:
;; the card lists its choices, each with its key, and the keys work
;; only while point is on the card.  Nothing is asked until the user
;; goes to the card and presses one of them.
;;
;; The choices: allow, deny (with an optional reason for Claude), and
;; each rule the CLI suggests as a choice of its own that says what it
;; does.  An edit (Edit, Write, MultiEdit) can be looked at first in
;; ediff, the file now against the proposal in the file's major mode;
;; the proposal is editable, and "allow with your edits" runs the tool
;; with the edited text.  AskUserQuestion shows its questions and
;; their options; answering reads each answer in the minibuffer, where
;; any text may be typed.  ExitPlanMode shows the plan: approve or keep
;; planning.
;;
;; Answering closes what the prompt opened; a prompt withdrawn (its
;; turn ended, its session or the bridge died) closes it too, and can
;; no longer be answered.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'claude-bridge-protocol)
(require 'claude-bridge-client)
(require 'claude-bridge-model)

(declare-function ediff-buffers "ediff" (buffer-a buffer-b &optional startup-hooks job-name))
(declare-function ediff-really-quit "ediff-util" (reverse-default-keep-variants))
(defvar ediff-this-buffer-ediff-sessions)
(defvar claude-bridge--buffer-chat)

(defconst claude-bridge-permission-edit-tools '("Edit" "Write" "MultiEdit")
  "The tools whose permission prompt can show the change first.")

;;;; What a card says

(defun claude-bridge-permission--question-p (request)
  "Return non-nil when REQUEST asks the user questions (AskUserQuestion)."
  (and (not (claude-bridge-permission--plan-p request))
       (or (eq (plist-get request :requiresUserInteraction) t)
           (equal (plist-get request :toolName) "AskUserQuestion"))))

(defun claude-bridge-permission--plan-p (request)
  "Return non-nil when REQUEST asks to leave plan mode with a plan."
  (equal (plist-get request :toolName) "ExitPlanMode"))

(defun claude-bridge-permission--edit-p (request)
  "Return non-nil when REQUEST is an edit whose change can be shown."
  (and (member (plist-get request :toolName) claude-bridge-permission-edit-tools)
       (claude-bridge-model-tool-file (plist-get request :input))))

(defun claude-bridge-permission-title (request)
  "Return the first line of the card of REQUEST."
  (let ((input (plist-get request :input)))
    (cond
     ((claude-bridge-permission--question-p request) "Claude asks")
     ((claude-bridge-permission--plan-p request) "Claude's plan is ready")
     (t (format "Claude wants %s"
                (claude-bridge-model-tool-summary
                 (or (plist-get request :displayName) (plist-get request :toolName))
                 input))))))

(defconst claude-bridge-permission--destinations
  '(("userSettings" . "for you, in every project")
    ("projectSettings" . "for this project, shared")
    ("localSettings" . "for this project, just you")
    ("session" . "for this session")
    ("cliArg" . "for this session"))
  "What each destination of a permission rule means.")

(defun claude-bridge-permission--rule-text (rule)
  "Return RULE (a plist: toolName, ruleContent) as the CLI writes it."
  (let ((content (plist-get rule :ruleContent)))
    (if (and content (not (string-empty-p content)))
        (format "%s(%s)" (plist-get rule :toolName) content)
      (plist-get rule :toolName))))

(defun claude-bridge-permission-suggestion-label (suggestion)
  "Return what choosing SUGGESTION, a rule update of the CLI, would do."
  (let ((where (or (cdr (assoc (plist-get suggestion :destination)
                               claude-bridge-permission--destinations))
                   (plist-get suggestion :destination))))
    (pcase (plist-get suggestion :type)
      ((or "addRules" "replaceRules")
       (format "%s %s %s"
               (if (equal (plist-get suggestion :behavior) "deny") "Always deny"
                 (if (equal (plist-get suggestion :behavior) "ask") "Always ask for"
                   "Always allow"))
               (mapconcat #'claude-bridge-permission--rule-text
                          (append (plist-get suggestion :rules) nil) ", ")
               where))
      ("setMode"
       (format "Allow, and switch to mode %s %s" (plist-get suggestion :mode) where))
      ("addDirectories"
       (format "Allow, and allow the folder%s %s %s"
               (if (> (length (plist-get suggestion :directories)) 1) "s" "")
               (mapconcat #'abbreviate-file-name
                          (append (plist-get suggestion :directories) nil) ", ")
               where))
      (type (format "Allow, and %s %s" type where)))))

(defun claude-bridge-permission--suggestion-done (suggestion)
  "Return what choosing SUGGESTION did, for its answered card."
  (let ((where (or (cdr (assoc (plist-get suggestion :destination)
                               claude-bridge-permission--destinations))
                   (plist-get suggestion :destination))))
    (pcase (plist-get suggestion :type)
      ((or "addRules" "replaceRules")
       (format "rule %s %s %s"
               (mapconcat #'claude-bridge-permission--rule-text
                          (append (plist-get suggestion :rules) nil) ", ")
               (pcase (plist-get suggestion :behavior)
                 ("deny" "denies") ("ask" "asks") (_ "allows"))
               where))
      ("setMode" (format "mode %s %s" (plist-get suggestion :mode) where))
      ("addDirectories"
       (format "%s allowed %s"
               (mapconcat #'abbreviate-file-name
                          (append (plist-get suggestion :directories) nil) ", ")
               where))
      (type (format "%s %s" type where)))))

(defun claude-bridge-permission--suggestion-help (suggestion)
  "Return the tooltip of the choice of SUGGESTION."
  (if (equal (plist-get suggestion :type) "setMode")
      (format "Allow once and switch the permission mode to %s: %s"
              (plist-get suggestion :mode)
              (or (cdr (assoc (plist-get suggestion :mode)
                              claude-bridge-protocol-permission-modes))
                  ""))
    "Allow, and add this rule so that the CLI stops asking"))

(defun claude-bridge-permission-choices (request &optional item)
  "Return the choices of the card of REQUEST (and of its ITEM), in order.
Each is a plist: :key (a character), :label, :help and :do (allow,
deny, keep-planning, answer, view, allow-edited, or (rule . SUGGESTION))."
  (let ((suggestions (cl-loop for s across (or (plist-get request :suggestions) [])
                              for key from ?1 to ?9
                              collect (list :key key
                                            :label (claude-bridge-permission-suggestion-label s)
                                            :help (claude-bridge-permission--suggestion-help s)
                                            :do (cons 'rule s)))))
    (cond
     ((claude-bridge-permission--question-p request)
      (list (list :key ?a :label "Answer" :do 'answer
                  :help "Answer the questions in the minibuffer")
            (list :key ?d :label "Decline" :do 'deny
                  :help "Do not answer; Claude is told so")))
     ((claude-bridge-permission--plan-p request)
      (append (list (list :key ?a :label "Approve" :do 'allow
                          :help "Approve the plan: Claude starts working")
                    (list :key ?d :label "Keep planning" :do 'keep-planning
                          :help "Tell Claude what to change in the plan"))
              suggestions))
     (t
      (append (list (list :key ?a :label "Allow" :do 'allow :help "Run it, this once"))
              (when (and item (claude-bridge-permission--proposal-edited-p item))
                (list (list :key ?e :label "Allow with your edits" :do 'allow-edited
                            :help "Run it with the proposal as you edited it")))
              (list (list :key ?d :label "Deny" :do 'deny
                          :help "Refuse, with a reason for Claude if you like"))
              (when (claude-bridge-permission--edit-p request)
                (list (list :key ?v :label "View the change" :do 'view
                            :help "Compare the file now and after in ediff; the proposal is editable")))
              suggestions)))))

(defun claude-bridge-permission--change-stat (request)
  "Return \"+N -M lines\" for the edit REQUEST proposes, or nil."
  (pcase-let ((`(,_file ,before ,after) (claude-bridge-permission--change request)))
    (when (and before after)
      (let ((old (split-string before "\n")) (new (split-string after "\n")))
        (let ((removed (length (cl-set-difference old new :test #'equal)))
              (added (length (cl-set-difference new old :test #'equal))))
          (format "+%d -%d lines" added removed))))))

(defun claude-bridge-permission-body (request &optional item)
  "Return the lines of the card of REQUEST (and its ITEM) under its title, or nil."
  (let ((input (plist-get request :input)))
    (string-join
     (delq nil
           (append
            (cond
             ((claude-bridge-permission--question-p request)
              (mapcar (lambda (q)
                        (concat (if (plist-get q :header)
                                    (format "%s: " (plist-get q :header)) "")
                                (plist-get q :question)
                                (if (eq (plist-get q :multiSelect) t) " (several)" "")
                                (mapconcat (lambda (o)
                                             (format "\n  - %s%s" (plist-get o :label)
                                                     (if (plist-get o :description)
                                                         (format " — %s" (plist-get o :description))
                                                       "")))
                                           (append (plist-get q :options) nil) "")))
                      (append (plist-get input :questions) nil)))
             ((claude-bridge-permission--plan-p request)
              (list (string-trim (or (plist-get input :plan)
                                     (and item (plist-get (claude-bridge-model-get
                                                           item :tool-input)
                                                          :plan))
                                     ""))))
             (t
              (list (let ((command (plist-get input :command)))
                      (and (stringp command) (string-match-p "\n" command) command))
                    (let ((d (plist-get request :description)))
                      (and (stringp d) (not (string-empty-p d))
                           (not (string-search d (claude-bridge-permission-title request)))
                           d))
                    (when (claude-bridge-permission--edit-p request)
                      (concat (or (claude-bridge-permission--change-stat request) "")
                              (if (and item (claude-bridge-permission--proposal-edited-p item))
                                  " (you edited the proposal)" ""))))))
            (list (let ((why (plist-get request :decisionReason)))
                    (and (stringp why) (format "Why: %s" why)))
                  ;; Drawn in the chat, whose folder is `default-directory'.
                  (let ((path (plist-get request :blockedPath)))
                    (and (stringp path) (not (file-in-directory-p path default-directory))
                         (format "Outside the project: %s" path))))))
     "\n")))

;;;; Cards at point

(defun claude-bridge-permission-card-at-point ()
  "Return the waiting permission card at point in a chat buffer, or nil."
  (let ((item (and (< (point) (point-max)) (get-text-property (point) 'claude-bridge-item)))
        (chat claude-bridge--buffer-chat))
    (and item chat (eq (claude-bridge-item-kind item) 'permission)
         (claude-bridge-model-permission-pending-p chat item)
         item)))

(defun claude-bridge-permission-choice-for-key (key)
  "Return the choice of KEY (a character) on the card at point, or nil."
  (when-let ((item (claude-bridge-permission-card-at-point)))
    (cl-find key (claude-bridge-permission-choices (claude-bridge-model-get item :request) item)
             :key (lambda (c) (plist-get c :key)))))

(defun claude-bridge-permission-choose-key ()
  "Answer the permission card at point with the choice of the key pressed.
RET offers every choice of the card."
  (interactive)
  (let* ((item (or (claude-bridge-permission-card-at-point)
                   (user-error "No permission prompt waits here")))
         (chat claude-bridge--buffer-chat)
         (choices (claude-bridge-permission-choices (claude-bridge-model-get item :request)
                                                    item))
         (choice (if (memq last-command-event '(?\r return))
                     (let ((key (car (read-multiple-choice
                                      (claude-bridge-permission-title
                                       (claude-bridge-model-get item :request))
                                      (mapcar (lambda (c) (list (plist-get c :key)
                                                                (plist-get c :label)
                                                                (plist-get c :help)))
                                              choices)))))
                       (cl-find key choices :key (lambda (c) (plist-get c :key))))
                   (claude-bridge-permission-choice-for-key last-command-event))))
    (when choice
      (claude-bridge-permission-choose chat item choice))))

;;;; Answering

(defun claude-bridge-permission--read-reason (prompt)
  "Read an optional reason with PROMPT; return it, or nil when empty."
  (let ((reason (string-trim (read-string prompt))))
    (unless (string-empty-p reason) reason)))

(defun claude-bridge-permission-choose (chat item choice)
  "Answer the permission prompt ITEM of CHAT with CHOICE (from its card).
Choices that need more (a reason, the answers to questions) ask for it
now, in the minibuffer; \\[keyboard-quit] there leaves the prompt open."
  (unless (claude-bridge-model-permission-pending-p chat item)
    (user-error "This permission prompt is no longer waiting"))
  (let* ((request (claude-bridge-model-get item :request))
         (do (plist-get choice :do)))
    (pcase do
      ('view (claude-bridge-permission-view-change chat item))
      ('allow (claude-bridge-permission-respond chat item '(:behavior "allow") "allowed"))
      ('allow-edited
       (claude-bridge-permission-respond
        chat item (list :behavior "allow"
                        :updatedInput (claude-bridge-permission--edited-input item))
        "allowed with your edits"))
      ('deny
       (let ((reason (unless (claude-bridge-permission--question-p request)
                       (claude-bridge-permission--read-reason
                        "Deny; reason for Claude (optional): "))))
         (claude-bridge-permission-respond
          chat item (list :behavior "deny" :message (or reason "Denied by the user."))
          (if reason (format "denied: %s" reason) "denied"))))
      ('keep-planning
       (let ((reason (claude-bridge-permission--read-reason
                      "What should change in the plan (optional): ")))
         (claude-bridge-permission-respond
          chat item
          (list :behavior "deny"
                :message (concat "The user wants to keep planning."
                                 (if reason (concat " " reason) "")))
          "keep planning")))
      ('answer
       (let ((answers (claude-bridge-permission--read-answers request)))
         (claude-bridge-permission-respond
          chat item
          (list :behavior "allow"
                :updatedInput (append (plist-get request :input) (list :answers answers)))
          (format "answered: %s"
                  (string-join (let (parts)
                                 (maphash (lambda (q a) (push (format "%s → %s" q a) parts))
                                          answers)
                                 (nreverse parts))
                               "; ")))))
      (`(rule . ,suggestion)
       (claude-bridge-permission-respond
        chat item (list :behavior "allow" :updatedPermissions (vector suggestion))
        (format "allowed; %s" (claude-bridge-permission--suggestion-done suggestion)))))))

(defun claude-bridge-permission--read-answers (request)
  "Read the answers to REQUEST's questions; return them as a hash table.
Any text is accepted, not only the options."
  (let ((answers (make-hash-table :test #'equal)))
    (dolist (q (append (plist-get (plist-get request :input) :questions) nil))
      (let* ((options (append (plist-get q :options) nil))
             (labels (mapcar (lambda (o) (plist-get o :label)) options))
             (table (lambda (string pred action)
                      (if (eq action 'metadata)
                          `(metadata
                            (display-sort-function . identity)
                            (annotation-function
                             . ,(lambda (c)
                                  (let ((o (cl-find c options :key (lambda (o) (plist-get o :label))
                                                    :test #'equal)))
                                    (if (plist-get o :description)
                                        (concat "  " (plist-get o :description)) "")))))
                        (complete-with-action action labels string pred))))
             (prompt (format "%s%s " (if (plist-get q :header)
                                         (format "%s: " (plist-get q :header)) "")
                             (plist-get q :question))))
        (puthash (plist-get q :question)
                 (if (eq (plist-get q :multiSelect) t)
                     (string-join (completing-read-multiple prompt table) ", ")
                   (completing-read prompt table))
                 answers)))
    answers))

(defun claude-bridge-permission-respond (chat item decision answer)
  "Send DECISION about the permission prompt ITEM of CHAT; it ends as ANSWER.
The prompt's diff, if any, is closed.  A prompt the bridge no longer
knows (its session or the bridge is gone) is withdrawn instead."
  (unless (claude-bridge-model-permission-pending-p chat item)
    (user-error "This permission prompt is no longer waiting"))
  (let ((request-id (plist-get (claude-bridge-model-get item :request) :requestId))
        (session-id (claude-bridge--chat-id chat)))
    (claude-bridge-model-put item :allowed (equal (plist-get decision :behavior) "allow"))
    (claude-bridge-model-answer-permission chat item answer)
    (claude-bridge-permission-close chat item)
    (claude-bridge-client-call
     "session/respondPermission"
     (list :sessionId session-id :requestId request-id :decision decision)
     :start nil
     :on-error
     (lambda (err)
       (claude-bridge-model-put item :answer
                                (format "withdrawn: not taken (%s)"
                                        (claude-bridge-client-error-message err)))
       (claude-bridge-model-put item :withdrawn t)
       (claude-bridge-model-redraw chat item)
       (message "claude-bridge: that permission prompt was withdrawn: %s"
                (claude-bridge-client-error-message err))))))

;;;; The change of an edit

(defun claude-bridge-permission--apply-edit (text old new all)
  "Return TEXT with OLD replaced by NEW (every one when ALL), or nil if absent."
  (cond
   ((or (null old) (string-empty-p old)) (concat new text))
   ((not (string-search old text)) nil)
   (all (string-replace old new text))
   (t (let ((at (string-search old text)))
        (concat (substring text 0 at) new (substring text (+ at (length old))))))))

(defun claude-bridge-permission--change (request)
  "Return (FILE BEFORE AFTER) for the edit of REQUEST: the file now and after.
BEFORE is \"\" for a file that does not exist; AFTER nil when the edit
does not apply to the file as it is now."
  (let* ((input (plist-get request :input))
         (file (claude-bridge-model-tool-file input))
         (before (if (and file (file-readable-p file))
                     (with-temp-buffer (insert-file-contents file) (buffer-string))
                   "")))
    (list file before
          (pcase (plist-get request :toolName)
            ("Write" (or (plist-get input :content) ""))
            ("Edit" (claude-bridge-permission--apply-edit
                     before (plist-get input :old_string) (plist-get input :new_string)
                     (eq (plist-get input :replace_all) t)))
            ("MultiEdit"
             (cl-reduce (lambda (text edit)
                          (and text (claude-bridge-permission--apply-edit
                                     text (plist-get edit :old_string)
                                     (plist-get edit :new_string)
                                     (eq (plist-get edit :replace_all) t))))
                        (append (plist-get input :edits) nil)
                        :initial-value before))))))

(defun claude-bridge-permission--setup-mode (file)
  "Put the current buffer in FILE's major mode, without the mode's hooks."
  (let ((buffer-file-name file))
    (delay-mode-hooks (set-auto-mode t)))
  (font-lock-mode 1))

(defun claude-bridge-permission--proposal-edited-p (item)
  "Return non-nil when the user changed the proposal of the edit ITEM."
  (let ((buf (claude-bridge-model-get item :proposal)))
    (and (buffer-live-p buf) (buffer-modified-p buf))))

(defun claude-bridge-permission--edited-input (item)
  "Return the tool input that gives the edit ITEM's file the user's text."
  (let* ((request (claude-bridge-model-get item :request))
         (input (plist-get request :input))
         (file (claude-bridge-model-tool-file input))
         (edited (with-current-buffer (claude-bridge-model-get item :proposal)
                   (buffer-substring-no-properties (point-min) (point-max))))
         (before (nth 1 (claude-bridge-permission--change request))))
    (pcase (plist-get request :toolName)
      ("Write" (list :file_path file :content edited))
      ("Edit" (list :file_path file :old_string before :new_string edited
                    :replace_all :json-false))
      (_ (list :file_path file
               :edits (vector (list :old_string before :new_string edited
                                    :replace_all :json-false)))))))

(defvar-local claude-bridge-permission--proposal-of nil
  "In a proposal buffer: (CHAT . ITEM), the permission prompt it belongs to.")

(defun claude-bridge-permission--proposal-changed (&rest _)
  "Redraw the card of this proposal buffer, to offer to allow the edits."
  (when-let ((owner claude-bridge-permission--proposal-of))
    (claude-bridge-model-redraw (car owner) (cdr owner))))

(defvar claude-bridge-proposal-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'claude-bridge-proposal-allow)
    (define-key map (kbd "C-c C-k") #'claude-bridge-proposal-deny)
    map)
  "Keymap of `claude-bridge-proposal-mode'.")

(define-minor-mode claude-bridge-proposal-mode
  "Minor mode of the proposal of an edit Claude asks to make.
Edit it if you like; \\[claude-bridge-proposal-allow] allows the edit \
\(with your changes), \\[claude-bridge-proposal-deny] denies it."
  :lighter " Proposal"
  :keymap claude-bridge-proposal-mode-map
  (when claude-bridge-proposal-mode
    (setq header-line-format
          (substitute-command-keys
           "Claude's proposal: edit it if you like.  \\<claude-bridge-proposal-mode-map>\
\\[claude-bridge-proposal-allow] allow (with your edits), \\[claude-bridge-proposal-deny] deny"))))

(defun claude-bridge-proposal-allow ()
  "Allow the edit this proposal belongs to, with the proposal as it is now."
  (interactive)
  (pcase-let ((`(,chat . ,item) (or claude-bridge-permission--proposal-of
                                    (user-error "Not a proposal of Claude"))))
    (if (buffer-modified-p)
        (claude-bridge-permission-choose chat item '(:do allow-edited))
      (claude-bridge-permission-choose chat item '(:do allow)))))

(defun claude-bridge-proposal-deny ()
  "Deny the edit this proposal belongs to."
  (interactive)
  (pcase-let ((`(,chat . ,item) (or claude-bridge-permission--proposal-of
                                    (user-error "Not a proposal of Claude"))))
    (claude-bridge-permission-choose chat item '(:do deny))))

(defun claude-bridge-permission--buffers (chat item)
  "Return (NOW PROPOSAL), the buffers that show the edit ITEM of CHAT.
They are made on first use: NOW the file as it is, read-only; PROPOSAL
the file after the edit, editable; both in the file's major mode."
  (let* ((request (claude-bridge-model-get item :request))
         (change (claude-bridge-permission--change request))
         (file (nth 0 change))
         (name (file-name-nondirectory file))
         (now (claude-bridge-model-get item :now))
         (proposal (claude-bridge-model-get item :proposal)))
    (unless (nth 2 change)
      (user-error "The edit does not apply to %s as it is now" name))
    (unless (buffer-live-p now)
      (setq now (generate-new-buffer (format "*claude now: %s*" name)))
      (with-current-buffer now
        (insert (nth 1 change))
        (claude-bridge-permission--setup-mode file)
        (set-buffer-modified-p nil)
        (setq buffer-read-only t))
      (claude-bridge-model-put item :now now))
    (unless (buffer-live-p proposal)
      (setq proposal (generate-new-buffer (format "*claude proposal: %s*" name)))
      (with-current-buffer proposal
        (insert (nth 2 change))
        (claude-bridge-permission--setup-mode file)
        (set-buffer-modified-p nil)
        (setq buffer-undo-list nil)
        (setq claude-bridge-permission--proposal-of (cons chat item))
        (add-hook 'first-change-hook #'claude-bridge-permission--proposal-changed nil t)
        (claude-bridge-proposal-mode 1))
      (claude-bridge-model-put item :proposal proposal))
    (list now proposal)))

(defun claude-bridge-permission-view-change (chat item)
  "Show the change of the edit ITEM of CHAT in ediff: the file now, the proposal.
Quitting ediff puts the windows back as they were and comes back to
the card; the proposal stays, with any edit made to it, until the
prompt is answered."
  (pcase-let ((`(,now ,proposal) (claude-bridge-permission--buffers chat item))
              (windows (current-window-configuration)))
    (require 'ediff)
    (ediff-buffers
     now proposal
     (list (lambda ()
             (add-hook 'ediff-quit-hook
                       (lambda ()
                         (set-window-configuration windows)
                         (when (claude-bridge-model-permission-pending-p chat item)
                           (message "Back at the prompt: a allow, e allow with your \
edits, d deny")))
                       t t))))))

(defun claude-bridge-permission--quit-ediff (buffer)
  "End the ediff sessions that show BUFFER, restoring the windows."
  (when (buffer-live-p buffer)
    (dolist (control (buffer-local-value 'ediff-this-buffer-ediff-sessions buffer))
      (when (buffer-live-p control)
        (with-current-buffer control
          (ignore-errors (ediff-really-quit nil)))))))

(defun claude-bridge-permission-close (_chat item)
  "Close what the permission prompt ITEM opened: its ediff and its buffers."
  (dolist (key '(:proposal :now))
    (let ((buf (claude-bridge-model-get item key)))
      (when (buffer-live-p buf)
        (when (boundp 'ediff-this-buffer-ediff-sessions)
          (claude-bridge-permission--quit-ediff buf))
        (with-current-buffer buf (set-buffer-modified-p nil))
        (kill-buffer buf)))
    (claude-bridge-model-put item key nil)))

(add-hook 'claude-bridge-model-withdraw-functions #'claude-bridge-permission-close)

(provide 'claude-bridge-permission)
;;; claude-bridge-permission.el ends here
